"""monotonically_increasing_id(): the partition number in the upper 28 bits and the row's number
within its partition in the lower 36 (Daft's layout), on both runners."""

from __future__ import annotations

import pyarrow as pa
import pytest

import ketch
from ketch import col
from ketch.functions import monotonically_increasing_id

pytestmark = pytest.mark.usefixtures("runner")

SHIFT = 36


def expected_ids(sizes: list[int]) -> list[int]:
    return [(p << SHIFT) | r for p, n in enumerate(sizes) for r in range(n)]


def test_daft_docstring_example() -> None:
    df = ketch.from_pydict({"a": [1, 2, 3, 4]}).into_partitions(2)
    out = df.with_column("id", monotonically_increasing_id())
    assert out.schema()["id"].dtype == ketch.DataType.uint64()
    assert out.sort("a").to_pydict() == {"a": [1, 2, 3, 4], "id": [0, 1, 68719476736, 68719476737]}


@pytest.mark.parametrize("partitions", [1, 3, 5])
def test_ids_by_partition(partitions: int) -> None:
    n = 1000
    df = ketch.from_pydict({"a": list(range(n))}).into_partitions(partitions)
    out = df.with_column("id", monotonically_increasing_id()).to_pydict()
    sizes = [len(part.to_pydict()["a"]) for part in df.iter_partitions()]
    assert len(sizes) == partitions and sum(sizes) == n
    assert out["a"] == list(range(n))
    assert out["id"] == expected_ids(sizes)


def test_counts_rows_reaching_the_projection() -> None:
    df = ketch.from_pydict({"a": list(range(10))})
    out = df.where(col("a") % 2 == 1).with_column("id", monotonically_increasing_id()).to_pydict()
    assert out == {"a": [1, 3, 5, 7, 9], "id": [0, 1, 2, 3, 4]}
    # A filter above the ids does not renumber them (and is not pushed below them).
    out = df.with_column("id", monotonically_increasing_id()).where(col("a") % 2 == 1).to_pydict()
    assert out == {"a": [1, 3, 5, 7, 9], "id": [1, 3, 5, 7, 9]}


def test_in_select_with_expressions() -> None:
    df = ketch.from_pydict({"a": [5, 6, 7]})
    out = df.select(
        col("a"), monotonically_increasing_id().alias("x"), (monotonically_increasing_id() + 10).alias("y")
    )
    assert out.to_pydict() == {"a": [5, 6, 7], "x": [0, 1, 2], "y": [10, 11, 12]}
    assert out.column_names == ["a", "x", "y"]


def test_unique_over_many_rows() -> None:
    n = 200_000
    df = ketch.from_arrow(pa.table({"a": pa.array(range(n), pa.int64())})).into_partitions(4)
    ids = df.with_column("id", monotonically_increasing_id()).to_pydict()["id"]
    assert len(set(ids)) == n and ids == sorted(ids)


def test_outside_a_projection_fails() -> None:
    df = ketch.from_pydict({"a": [1, 2]})
    with pytest.raises(Exception, match="monotonic"):
        df.where(monotonically_increasing_id() > 0).collect()
