"""``list_count`` read straight from list offsets: list, large_list, fixed_size_list and map columns,
sliced, with null rows whose hidden child values (nulls among them) must not be counted, against
Python counts over ``to_pylist``."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import ketch
from ketch import col


def random_lists(rng: np.random.Generator, n: int, size: int | None = None) -> list[list[int | None] | None]:
    out: list[list[int | None] | None] = []
    for _ in range(n):
        if rng.random() < 0.2:
            out.append(None)
            continue
        k = size if size is not None else int(rng.integers(0, 5))
        out.append([None if rng.random() < 0.3 else int(v) for v in rng.integers(0, 9, k)])
    return out


def counts(column: pa.Array, mode: str) -> list[int | None]:
    df = ketch.from_arrow(pa.table({"l": column}))
    return df.select(col("l").list_count(mode).alias("c")).to_pydict()["c"]


def expected(rows: list, mode: str) -> list[int | None]:
    def one(row: list) -> int:
        nulls = sum(v is None for v in row)
        return {"all": len(row), "null": nulls, "valid": len(row) - nulls}[mode]

    return [None if row is None else one(row) for row in rows]


def with_hidden_values(
    values: pa.Array, offsets: list[int], null_rows: list[int], list_type: type
) -> pa.Array:
    """A list array whose null rows still span child values (Arrow allows it)."""
    mask = np.zeros(len(offsets) - 1, dtype=bool)
    mask[null_rows] = True
    offset_type = pa.int64() if list_type is pa.LargeListArray else pa.int32()
    return list_type.from_arrays(pa.array(offsets, offset_type), values, mask=pa.array(mask))


@pytest.mark.parametrize("mode", ["all", "valid", "null"])
@pytest.mark.parametrize("kind", ["list", "large_list", "fixed_size_list"])
def test_list_count_matches_python(rng: np.random.Generator, mode: str, kind: str) -> None:
    if kind == "fixed_size_list":
        rows = random_lists(rng, 300, size=3)
        column = pa.array(rows, pa.list_(pa.int64(), 3))
    else:
        rows = random_lists(rng, 300)
        column = pa.array(rows, pa.list_(pa.int64()) if kind == "list" else pa.large_list(pa.int64()))
    assert counts(column, mode) == expected(rows, mode)
    assert counts(column.slice(17, 150), mode) == expected(rows[17:167], mode)


@pytest.mark.parametrize("list_type", [pa.ListArray, pa.LargeListArray])
@pytest.mark.parametrize("mode", ["all", "valid", "null"])
def test_null_rows_spanning_values_are_null(list_type: type, mode: str) -> None:
    values = pa.array([1, None, 2, None, None, 3, 4])
    column = with_hidden_values(values, [0, 2, 5, 7], null_rows=[1], list_type=list_type)
    assert column.to_pylist() == [[1, None], None, [3, 4]]
    assert counts(column, mode) == expected(column.to_pylist(), mode)
    assert counts(column.slice(1), mode) == expected(column.to_pylist()[1:], mode)


def test_map_counts_entries() -> None:
    column = pa.array([[("a", 1), ("b", None)], None, []], pa.map_(pa.string(), pa.int64()))
    assert counts(column, "all") == [2, None, 0]
