"""``contains`` (Ketch's memmem kernel for utf8_contains) against Python's ``in`` and Arrow's
match_substring: string, large_string and string_view columns, sliced and chunked arrays, nulls,
empty strings and needles, multi-byte characters, needles longer than the values."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import ketch
from ketch import col

WORDS = ["", "a", "an", "banana", "café", "über", "日本語", "emoji😀", "Ωmega", "ann", "nan", "x" * 40]
NEEDLES = ["", "an", "a", "ü", "日本", "😀", "Ω", "nana", "x" * 41, "x" * 17, "é", "zz"]


def values(rng: np.random.Generator, n: int = 2_000) -> list[str | None]:
    out: list[str | None] = []
    for _ in range(n):
        if rng.random() < 0.1:
            out.append(None)
        else:
            out.append(" ".join(WORDS[int(i)] for i in rng.integers(0, len(WORDS), int(rng.integers(0, 5)))))
    return out


def contains(column: pa.Array | pa.ChunkedArray, needle: str) -> list[bool | None]:
    table = pa.table({"s": column})
    return ketch.from_arrow(table).select(col("s").contains(needle).alias("r")).to_pydict()["r"]


@pytest.mark.parametrize("arrow_type", [pa.string(), pa.large_string(), pa.string_view()])
def test_contains_matches_python_and_arrow(rng: np.random.Generator, arrow_type: pa.DataType) -> None:
    data = values(rng)
    column = pa.array(data, arrow_type)
    for needle in NEEDLES:
        expected = [None if v is None else needle in v for v in data]
        assert contains(column, needle) == expected, needle
        if arrow_type != pa.string_view():
            assert expected == pc.match_substring(column, needle).to_pylist()


def test_contains_on_sliced_and_chunked_arrays(rng: np.random.Generator) -> None:
    data = values(rng, 500)
    sliced = pa.array(data, pa.large_string()).slice(37, 300)
    chunked = pa.chunked_array([pa.array(data[:100]), pa.array(data[100:]).slice(5)])
    for needle in ["an", "ü", ""]:
        assert contains(sliced, needle) == [None if v is None else needle in v for v in data[37:337]]
        expected = [None if v is None else needle in v for v in data[:100] + data[105:]]
        assert contains(chunked, needle) == expected


def test_contains_all_null_and_no_null_columns() -> None:
    assert contains(pa.array([None, None], pa.string()), "a") == [None, None]
    assert contains(pa.nulls(3), "a") == [None, None, None]
    assert contains(pa.array(["abc", "", "bca"]), "bc") == [True, False, True]
