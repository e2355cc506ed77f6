"""Join key types and CSV empty fields as Daft 0.7.26 gives them (issue 28; expected values read
from Daft itself running the same queries)."""

from __future__ import annotations

import pytest

import ketch
from ketch import DataType

# Daft: (key dtype, the sorted result) per join type, int64 left keys joined with float64 ones.
DAFT_JOINS = {
    "inner": ("Int64", {"k": [1, 3], "a": [10, 30], "v": [3, 5]}),
    "left": ("Int64", {"k": [1, 2, 3], "a": [10, 20, 30], "v": [3, None, 5]}),
    "right": ("Float64", {"k": [1.0, 2.5, 3.0], "a": [10, None, 30], "v": [3, 4, 5]}),
    "outer": ("Float64", {"k": [1.0, 2.0, 2.5, 3.0], "a": [10, 20, None, 30], "v": [3, None, 4, 5]}),
    "semi": ("Int64", {"k": [1, 3], "a": [10, 30]}),
    "anti": ("Int64", {"k": [2], "a": [20]}),
}


@pytest.mark.parametrize("how", sorted(DAFT_JOINS))
def test_a_merged_key_of_two_types_keeps_the_preserved_sides_type(how: str) -> None:
    left = ketch.from_pydict({"k": [1, 2, 3], "a": [10, 20, 30]})
    right = ketch.from_pydict({"k": [1.0, 2.5, 3.0], "v": [3, 4, 5]})
    joined = left.join(right, on="k", how=how).sort("k")
    dtype, values = DAFT_JOINS[how]
    assert repr(joined.schema()["k"].dtype) == dtype
    assert joined.to_pydict() == values


def test_large_int64_keys_of_an_inner_join_keep_their_exact_values() -> None:
    big = 2**60 + 1  # not representable in float64: the output key must be the left's own value
    left = ketch.from_pydict({"k": [big, 5], "a": [1, 2]})
    right = ketch.from_pydict({"k": [5.0], "v": [7]})
    assert left.join(right, on="k").to_pydict() == {"k": [5], "a": [2], "v": [7]}
    kept = left.join(right, on="k", how="left").sort("a").to_pydict()
    assert kept["k"] == [big, 5] and kept["v"] == [None, 7]


def test_read_csv_keeps_empty_strings_and_nulls_empty_numbers(tmp_path) -> None:
    path = tmp_path / "e.csv"
    path.write_text('a,b,c\n,1,\nx,,2.5\n"",3,\n')
    df = ketch.read_csv(str(path))
    # Daft: {'a': ['', 'x', ''], 'b': [1, None, 3], 'c': [None, 2.5, None]}
    assert df.to_pydict() == {"a": ["", "x", ""], "b": [1, None, 3], "c": [None, 2.5, None]}
    schema = df.schema()
    assert schema["a"].dtype == DataType.string() and schema["b"].dtype == DataType.int64()
