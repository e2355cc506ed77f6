"""Global aggregations of zero rows, value by value as Daft 0.7.26 prints them: list aggregations
give one empty list and string_agg the empty string (Ketch gave null); counts 0; the rest null."""

from __future__ import annotations

import pytest

import ketch
from ketch import col

DAFT = {
    "list_agg": [[]],
    "list_agg_distinct": [[]],
    "string_agg": [""],
    "sum": [None],
    "count": [0],
    "count_distinct": [0],
    "approx_count_distinct": [0],
    "any_value": [None],
    "mean": [None],
    "product": [None],
    "min": [None],
    "stddev": [None],
    "skew": [None],
}


@pytest.mark.parametrize("name", sorted(DAFT))
def test_zero_row_global_aggregation_matches_daft(name):
    df = ketch.from_pydict({"a": [], "s": []}).select(
        col("a").cast(ketch.DataType.int64()), col("s").cast(ketch.DataType.string())
    )
    source = col("s") if name == "string_agg" else col("a")
    assert df.agg(getattr(source, name)().alias("x")).to_pydict()["x"] == DAFT[name]


def test_all_null_string_agg_stays_null_and_grouped_empty_has_no_rows():
    nulls = ketch.from_pydict({"s": [None, None]}).select(col("s").cast(ketch.DataType.string()))
    assert nulls.agg(col("s").string_agg()).to_pydict() == {"s": [None]}  # Daft: [None]
    no_rows = nulls.where(col("s") == "x")
    assert no_rows.agg(col("s").string_agg()).to_pydict() == {"s": [""]}  # Daft: ['']
    assert no_rows.agg(col("s").string_agg(delimiter="-")).to_pydict() == {"s": [None]}  # Daft: [None]
    empty = ketch.from_pydict({"g": [], "a": []}).select(
        col("g").cast(ketch.DataType.int64()), col("a").cast(ketch.DataType.int64())
    )
    assert empty.groupby("g").agg(col("a").list_agg()).to_pydict() == {"g": [], "a": []}
