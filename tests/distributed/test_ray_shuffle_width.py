"""How many reduce partitions a hash shuffle makes on Ray (Daft's rule): a join its widest
input's partition count, a groupby its input's count at most
``shuffle_aggregation_default_partitions``, both at most ``max_shuffle_partitions`` when the
user sets it. The 3-node test cluster has 3 CPUs, so the old default cap, max(8, 2 x CPUs) = 8,
is below the 12 partitions used here."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from ray_compare import native_then_ray

import ketch
from ketch import col


def _frames() -> tuple[ketch.DataFrame, ketch.DataFrame]:
    """A 12-partition left side and a 3-partition right side, materialized."""
    left = ketch.from_pydict({"k": [i % 50 for i in range(600)], "a": list(range(600))})
    right = ketch.from_pydict({"k": list(range(0, 60, 2)), "b": [f"r{i}" for i in range(30)]})
    return left.into_partitions(12).collect(), right.into_partitions(3).collect()


def _distributed_plan(df: ketch.DataFrame) -> str:
    buf = io.StringIO()
    df.explain(show_all=True, file=buf)
    return buf.getvalue().split("== Distributed Plan ==")[1]


def _widths(text: str) -> list[int]:
    """The bucket counts of the hash shuffles an explained distributed plan states."""
    return [int(n) for n in re.findall(r"hash shuffle by \[[^\]]*\] into (\d+)", text)]


def _rows(df: ketch.DataFrame) -> list[tuple[Any, ...]]:
    data = df.to_pydict()
    return sorted(zip(*data.values(), strict=True), key=repr)


@pytest.fixture
def uncapped(on_ray: Any) -> Any:
    previous = on_ray.max_shuffle_partitions
    on_ray.max_shuffle_partitions = None
    try:
        yield on_ray
    finally:
        on_ray.max_shuffle_partitions = previous


def test_a_join_shuffles_into_its_widest_inputs_partition_count(uncapped):
    left, right = _frames()
    assert (left.num_partitions(), right.num_partitions()) == (12, 3)

    def joined() -> ketch.DataFrame:
        return left.join(right, on="k", how="inner", strategy="hash")

    assert _widths(_distributed_plan(joined())) == [12, 12]
    native, on_cluster = native_then_ray(joined)
    assert _rows(on_cluster) == _rows(native)
    maps = [s for s in uncapped.last_stages if s.kind == "shuffle map"]
    assert [m.buckets for m in maps] == [12, 12]
    assert on_cluster.num_partitions() == 12
    # The widest side may be the right one.
    assert _widths(_distributed_plan(right.join(left, on="k", strategy="hash"))) == [12, 12]


def test_a_groupby_shuffles_into_its_inputs_count_at_most_the_aggregation_default(uncapped):
    left, _ = _frames()

    def grouped() -> ketch.DataFrame:
        return left.groupby("k").agg(col("a").sum())

    assert _widths(_distributed_plan(grouped())) == [12]
    native, on_cluster = native_then_ray(grouped)
    assert _rows(on_cluster) == _rows(native)
    assert [s.buckets for s in uncapped.last_stages if s.kind == "shuffle map"] == [12]
    # A single-phase aggregation (collects values) follows the same rule.
    assert _widths(_distributed_plan(left.groupby("k").agg(col("a").agg_list()))) == [12]
    with ketch.execution_config_ctx(shuffle_aggregation_default_partitions=5):
        assert _widths(_distributed_plan(grouped())) == [5]
        assert _widths(_distributed_plan(left.distinct())) == [5]
        native, on_cluster = native_then_ray(grouped)
        assert _rows(on_cluster) == _rows(native)
        assert [s.buckets for s in uncapped.last_stages if s.kind == "shuffle map"] == [5]
        # Joins are not aggregations: still the widest input's count.
        _, right = _frames()
        assert _widths(_distributed_plan(left.join(right, on="k", strategy="hash"))) == [12, 12]


def test_max_shuffle_partitions_caps_every_hash_shuffle_when_set(uncapped):
    left, right = _frames()
    uncapped.max_shuffle_partitions = 4
    assert _widths(_distributed_plan(left.join(right, on="k", strategy="hash"))) == [4, 4]
    assert _widths(_distributed_plan(left.groupby("k").agg(col("a").sum()))) == [4]
    native, on_cluster = native_then_ray(lambda: left.join(right, on="k", strategy="hash"))
    assert _rows(on_cluster) == _rows(native)
    assert [s.buckets for s in uncapped.last_stages if s.kind == "shuffle map"] == [4, 4]
