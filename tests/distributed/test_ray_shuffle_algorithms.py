"""The Ray runner's two shuffle algorithms (Daft's names): map_reduce (every map task partitions
its output) and pre_shuffle_merge (map outputs merged per node, up to a byte threshold, by a task
on that node, then partitioned), and "auto" choosing between them by sqrt(M x N). Results equal
the native runner's whatever the algorithm."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ketch
from ketch import col
from ketch.runners import get_runner


@pytest.fixture
def six_files(tmp_path: Any) -> Iterator[str]:
    root = tmp_path / "in"
    root.mkdir()
    for i in range(6):
        ids = list(range(i * 500, (i + 1) * 500))
        table = pa.table({"id": ids, "g": [j % 7 for j in ids], "v": [float(j) for j in ids]})
        pq.write_table(table, root / f"part-{i}.parquet")
    with ketch.execution_config_ctx(scan_tasks_min_size_bytes=1, max_sources_per_scan_task=1):
        yield str(root / "*.parquet")


def _grouped(path: str) -> dict[str, list[Any]]:
    df = ketch.read_parquet(path).groupby("g").agg(col("v").sum(), col("id").count()).sort("g")
    return df.to_pydict()


def _native(path: str) -> dict[str, list[Any]]:
    ray_runner = get_runner()
    ketch.set_runner_native()
    try:
        return _grouped(path)
    finally:
        ketch.runners._runner = ray_runner


@pytest.mark.parametrize("threshold", [1, 1 << 30])
def test_pre_shuffle_merge_merges_map_outputs_per_node_then_partitions(
    on_ray: Any, six_files: str, threshold: int
) -> None:
    expected = _native(six_files)
    with ketch.execution_config_ctx(
        shuffle_algorithm="pre_shuffle_merge", pre_shuffle_merge_threshold=threshold
    ):
        assert _grouped(six_files) == expected
    stages = {s.kind: s for s in on_ray.last_stages}
    maps = stages["pre-shuffle map"]
    merge = next(s for s in on_ray.last_stages if "pre-shuffle merge" in s.name)
    assert maps.tasks == 6 and maps.buckets == 0
    if threshold == 1:  # every output over the threshold: one merge task per map output
        assert merge.tasks == 6
    else:  # one merge task per node that ran map tasks, on that node
        assert merge.tasks == len(maps.tasks_per_node)
        assert merge.tasks_per_node == {node: 1 for node in maps.tasks_per_node}
    # (each map task's 500 rows are first aggregated into its 7 groups' partial states)
    assert maps.rows_out == 6 * 7 and merge.rows_out == maps.rows_out


def test_auto_picks_pre_shuffle_merge_above_the_partition_threshold(on_ray: Any, six_files: str) -> None:
    expected = _native(six_files)
    with ketch.execution_config_ctx(pre_shuffle_merge_partition_threshold=1):
        assert _grouped(six_files) == expected
    assert any(s.kind == "pre-shuffle map" for s in on_ray.last_stages)
    assert _grouped(six_files) == expected  # default threshold 200: sqrt(6 x 6) is below it
    assert not any(s.kind == "pre-shuffle map" for s in on_ray.last_stages)


def test_shuffle_algorithm_values_are_checked() -> None:
    with pytest.raises(ValueError, match="shuffle_algorithm must be"):
        ketch.set_execution_config(shuffle_algorithm="sort_merge")
    with pytest.raises(ValueError, match="pre_shuffle_merge_threshold"):
        ketch.set_execution_config(pre_shuffle_merge_threshold=0)
