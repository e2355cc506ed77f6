"""functions.monotonically_increasing_id() as Daft 0.7.26 gives it on its native runner: UInt64
ids 0, 1, 2, ... in row order over all partitions, computed lazily by a plan node; errors outside
projections with Daft's text. Expected values were printed by Daft 0.7.26."""

from __future__ import annotations

import io

import pyarrow as pa
import pytest

import ketch
from ketch.functions import monotonically_increasing_id


def test_ids_in_row_order_as_daft():
    df = ketch.from_pydict({"a": list(range(5))})
    out = df.with_column("id", monotonically_increasing_id())
    assert out.to_pydict() == {"a": [0, 1, 2, 3, 4], "id": [0, 1, 2, 3, 4]}  # Daft
    assert out.to_arrow().schema.field("id").type == pa.uint64()  # Daft: UInt64


def test_ids_continue_across_partitions_and_concat():
    df = ketch.from_pydict({"a": list(range(5))}).concat(ketch.from_pydict({"a": list(range(3))}))
    assert df.with_column("id", monotonically_increasing_id()).to_pydict()["id"] == list(range(8))  # Daft
    big = ketch.from_pydict({"a": list(range(50_000))}).into_partitions(7).into_batches(999)
    got = big.where(ketch.col("a") % 3 == 0).with_column("id", monotonically_increasing_id()).to_pydict()
    assert got["a"] == list(range(0, 50_000, 3)) and got["id"] == list(range(len(got["a"])))


def test_ids_after_a_filter_number_the_kept_rows():
    df = ketch.from_pydict({"a": list(range(5))})
    got = df.where(ketch.col("a") > 2).select(monotonically_increasing_id().alias("x"), "a")
    assert got.to_pydict() == {"x": [0, 1], "a": [3, 4]}  # Daft


def test_a_later_filter_keeps_the_ids_made_before_it():
    # Deliberate difference: Daft 0.7.26 pushes the filter beneath the ids and prints id [0, 1].
    df = ketch.from_pydict({"a": list(range(5))}).with_column("id", monotonically_increasing_id())
    assert df.where(ketch.col("a") > 2).to_pydict() == {"a": [3, 4], "id": [3, 4]}
    assert df.limit(2).to_pydict() == {"a": [0, 1], "id": [0, 1]}  # Daft


def test_two_uses_share_one_numbering_and_arithmetic_works():
    df = ketch.from_pydict({"a": list(range(3))})
    got = df.select(monotonically_increasing_id().alias("x"), (monotonically_increasing_id() * 10).alias("y"))
    assert got.to_pydict() == {"x": [0, 1, 2], "y": [0, 10, 20]}


@pytest.mark.parametrize(
    "use",
    [
        lambda df: df.where(monotonically_increasing_id() > 1),
        lambda df: df.sort(monotonically_increasing_id()),
        lambda df: df.groupby("a").agg(monotonically_increasing_id().count()),
        lambda df: df.agg(monotonically_increasing_id().max()),
    ],
)
def test_outside_projections_raises_daft_error(use):
    df = ketch.from_pydict({"a": [1, 2]})
    with pytest.raises(ValueError, match=r"monotonically_increasing_id\(\) is only allowed in projections"):
        use(df)


def test_lazy_plan_node_in_explain():
    buf = io.StringIO()
    ketch.from_pydict({"a": [1]}).with_column("id", monotonically_increasing_id()).explain(True, file=buf)
    assert "MonotonicallyIncreasingId" in buf.getvalue() and "MonotonicId (streaming sink" in buf.getvalue()
