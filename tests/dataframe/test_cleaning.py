"""drop_null, drop_nan, drop_duplicates as Daft defines them, checked against pandas / plain Python."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest

import ketch
from ketch import col

NAN = float("nan")


@pytest.fixture
def df() -> ketch.DataFrame:
    return ketch.from_pydict(
        {
            "f": pa.array([1.0, NAN, None, 4.0, NAN], pa.float64()),
            "g": pa.array([NAN, 2.0, 3.0, 4.0, 5.0], pa.float32()),
            "i": pa.array([1, None, 3, 4, 5], pa.int64()),
            "s": ["a", "b", None, "d", "e"],
        }
    )


def _ids(frame: ketch.DataFrame) -> list:
    return frame.to_pydict()["i"]


def test_drop_null_all_columns_by_default(df, runner):
    out = df.drop_null()
    assert _ids(out) == [1, 4, 5]  # NaN is not null: rows 0 and 4 stay
    assert math.isnan(out.to_pydict()["f"][2])
    # The same rows as a row-wise check of Python values (pandas' dropna would also drop NaN).
    table = df.to_pydict()
    keep = [r for r in zip(*table.values(), strict=True) if all(v is not None for v in r)]
    assert [r[2] for r in keep] == [1, 4, 5]


def test_drop_null_subset(df):
    assert _ids(df.drop_null("s")) == [1, None, 4, 5]
    assert _ids(df.drop_null("i", col("s"))) == [1, 4, 5]
    assert _ids(df.drop_null("f")) == [1, None, 4, 5]


def test_drop_nan_float_columns_only(df, runner):
    # Default: every float column; with several, a null is not NaN and stays. Daft 0.7.26 printed
    # these ids; with one float column it drops a null row too ([1, 4], its reduce's quirk).
    assert _ids(df.drop_nan()) == [3, 4]
    assert _ids(df.drop_nan("f")) == [1, 4]
    # Non-float columns given are ignored (Daft's behaviour): nothing to filter on.
    assert _ids(df.drop_nan("i", "s")) == [1, None, 3, 4, 5]
    assert _ids(df.drop_nan("g", "i")) == [None, 3, 4, 5]


def test_drop_duplicates_is_distinct():
    df = ketch.from_pydict({"x": [1, 2, 2, None, None], "y": [4, 5, 5, 6, 6], "z": [7, 8, 9, 1, 1]})
    assert sorted(df.drop_duplicates().to_pydict()["z"]) == [1, 7, 8, 9]
    subset = df.drop_duplicates("x", col("y")).to_pydict()
    assert sorted(zip(subset["x"], subset["y"], strict=True), key=str) == sorted(
        [(1, 4), (2, 5), (None, 6)], key=str
    )
