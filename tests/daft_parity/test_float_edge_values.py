"""Float edge values as Daft 0.7.26 gives them (issue 28, silent differences): a float cast to an
integer type is null where no integer of that type holds it (Ketch used to write Arrow's
truncating-cast garbage: NaN → -9223372036854775808), clip keeps NaN, substr is null where the
slice is empty. Expected values were printed by Daft 0.7.26 (benchmarks/.venv-peers)."""

from __future__ import annotations

import math

import pytest

import ketch
from ketch import DataType, col

NAN, INF = float("nan"), float("inf")
FLOATS = [0.0, -0.0, 1.5, -1.5, NAN, INF, -INF, 9.3e18, -9.3e18, 2.9e9, None]


def _same(got: list, want: list) -> bool:
    return len(got) == len(want) and all(
        (isinstance(g, float) and isinstance(w, float) and math.isnan(g) and math.isnan(w)) or g == w
        for g, w in zip(got, want, strict=True)
    )


@pytest.mark.parametrize(
    "dtype,want",
    [
        (DataType.int64(), [0, 0, 1, -1, None, None, None, None, None, 2900000000, None]),
        (DataType.int32(), [0, 0, 1, -1, None, None, None, None, None, None, None]),
        (DataType.uint8(), [0, 0, 1, None, None, None, None, None, None, None, None]),
        (DataType.int8(), [0, 0, 1, -1, None, None, None, None, None, None, None]),
    ],
)
def test_float_to_integer_cast_is_null_where_no_integer_holds_the_value(dtype, want):
    df = ketch.from_pydict({"f": FLOATS})
    assert df.select(col("f").cast(dtype).alias("r")).to_pydict()["r"] == want
    # Float32 input and a literal go the same way.
    f32 = df.select(col("f").cast(DataType.float32()).cast(dtype).alias("r")).to_pydict()["r"]
    assert f32[:7] == want[:7]
    assert df.select(ketch.lit(NAN).cast(dtype).alias("r")).to_pydict()["r"][0] is None


def test_float_to_integer_cast_truncates_toward_zero_at_the_range_edges():
    df = ketch.from_pydict({"f": [127.9, -128.9, 128.0, -129.0, 255.99, 4294967295.5]})
    out = df.select(col("f").cast(DataType.int8()).alias("i8"), col("f").cast(DataType.uint32()).alias("u32"))
    assert out.to_pydict() == {
        "i8": [127, -128, None, None, None, None],
        "u32": [127, None, 128, None, 255, 4294967295],
    }


def test_clip_keeps_nan():
    df = ketch.from_pydict({"f": FLOATS})
    assert _same(
        df.select(col("f").clip(-1, 1).alias("r")).to_pydict()["r"],
        [0.0, -0.0, 1.0, -1.0, NAN, 1.0, -1.0, 1.0, -1.0, 1.0, None],
    )
    assert _same(
        df.select(col("f").clip(-1).alias("r")).to_pydict()["r"],
        [0.0, -0.0, 1.5, -1.0, NAN, INF, -1.0, 9.3e18, -1.0, 2.9e9, None],
    )


@pytest.mark.parametrize(
    "start,length,want",
    [
        (0, 2, [None, "ab", "Äb", None, "x"]),
        (1, 2, [None, "bc", "bC", None, None]),
        (3, 1, [None, None, None, None, None]),
        (2, None, [None, "c", "C", None, None]),
        (0, 0, [None, None, None, None, None]),
    ],
)
def test_substr_is_null_where_the_slice_is_empty(start, length, want):
    df = ketch.from_pydict({"s": ["", "abc", "ÄbC", None, "x"]})
    assert df.select(col("s").substr(start, length).alias("r")).to_pydict()["r"] == want


def test_list_join_takes_a_null_element_as_empty_and_list_sort_puts_nulls_first_when_descending():
    # Daft 0.7.26 printed these values.
    df = ketch.from_pydict(
        {"l": [[1, None, 3, 2], [None, None], [], None], "s": [["a", None, "b"], [None], [], None]}
    )
    out = df.select(
        col("l").list_sort().alias("a"),
        col("l").list_sort(desc=True).alias("d"),
        col("l").list_sort(nulls_first=True).alias("anf"),
        col("l").list_sort(desc=True, nulls_first=False).alias("dnl"),
        col("s").list_join("-").alias("j"),
        col("s").list_join("").alias("j0"),
    ).to_pydict()
    assert out == {
        "a": [[1, 2, 3, None], [None, None], [], None],
        "d": [[None, 3, 2, 1], [None, None], [], None],
        "anf": [[None, 1, 2, 3], [None, None], [], None],
        "dnl": [[3, 2, 1, None], [None, None], [], None],
        "j": ["a--b", "", "", None],
        "j0": ["ab", "", "", None],
    }


def test_casts_that_do_not_convert_give_null_as_in_daft():
    # Daft 0.7.26 printed these values: text that does not parse and integers out of range are
    # null (arrow-rs's lenient cast); numbers and dates are read after trimming whitespace.
    text = ketch.from_pydict({"s": ["1", " 2", "x", "3.5", None]})
    assert text.select(col("s").cast(DataType.int64()).alias("r")).to_pydict()["r"] == [
        1,
        2,
        None,
        None,
        None,
    ]
    floats = ketch.from_pydict({"s": ["1", "1e3", "nan", "inf", "x"]})
    got = floats.select(col("s").cast(DataType.float64()).alias("r")).to_pydict()["r"]
    assert _same(got, [1.0, 1000.0, NAN, INF, None])
    words = ketch.from_pydict({"s": ["true", "False", "1", "yes", None]})
    assert words.select(col("s").cast(DataType.bool()).alias("r")).to_pydict()["r"] == [
        True,
        False,
        True,
        True,
        None,
    ]
    dates = ketch.from_pydict({"s": ["2024-02-29", "2023-02-29", "x"]})
    import datetime as dt

    want = [dt.date(2024, 2, 29), None, None]
    assert dates.select(col("s").cast(DataType.date()).alias("r")).to_pydict()["r"] == want
    ints = ketch.from_pydict({"x": [1, 300, -5, None]})
    out = ints.select(col("x").cast(DataType.int8()).alias("a"), col("x").cast(DataType.uint8()).alias("b"))
    assert out.to_pydict() == {"a": [1, None, -5, None], "b": [1, None, None, None]}


def test_drop_nan_and_fill_nan_as_daft():
    # Daft 0.7.26: one float column drops a null row too (its reduce never runs), several keep it;
    # fill_nan keeps the column's name.
    df = ketch.from_pydict({"a": [1, 2, 3, 4], "f": [0.5, None, NAN, 1.0]})
    assert df.drop_nan().to_pydict() == {"a": [1, 4], "f": [0.5, 1.0]}
    two = ketch.from_pydict({"a": [1, 2, None], "f": [0.5, None, 1.0], "g": [NAN, 1.0, 2.0]})
    assert two.drop_nan().to_pydict() == {"a": [2, None], "f": [None, 1.0], "g": [1.0, 2.0]}
    filled = ketch.from_pydict({"f": [NAN, 1.0, None]}).select(col("f").fill_nan(0.0))
    assert filled.to_pydict() == {"f": [0.0, 1.0, None]}
