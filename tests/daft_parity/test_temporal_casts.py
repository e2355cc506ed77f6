"""Timestamps and dates cast to text, and a date moved by a duration, as Daft 0.7.26 gives them
(issue 28, silent differences). Expected values were printed by Daft (benchmarks/.venv-peers)."""

from __future__ import annotations

import datetime as dt

import ketch
from ketch import DataType, col

D = dt.datetime


def test_timestamps_cast_to_text_as_chrono_displays_them():
    df = ketch.from_pydict(
        {
            "t": [
                D(2024, 1, 1, 0, 0, 0, 500000),
                D(2024, 1, 1, 0, 0, 0, 120),
                D(5, 1, 1),
                D(2024, 1, 1, 0, 0, 0, 1000),
                None,
            ]
        }
    )
    out = df.select(
        col("t").cast(DataType.string()).alias("us"),
        col("t").cast(DataType.timestamp("ms")).cast(DataType.string()).alias("ms"),
        col("t").cast(DataType.timestamp("s")).cast(DataType.string()).alias("s"),
    ).to_pydict()
    assert out["us"] == [
        "2024-01-01 00:00:00.500",
        "2024-01-01 00:00:00.000120",
        "0005-01-01 00:00:00",
        "2024-01-01 00:00:00.001",
        None,
    ]
    assert out["ms"] == [
        "2024-01-01 00:00:00.500",
        "2024-01-01 00:00:00",
        "0005-01-01 00:00:00",
        "2024-01-01 00:00:00.001",
        None,
    ]
    assert out["s"] == ["2024-01-01 00:00:00"] * 2 + ["0005-01-01 00:00:00", "2024-01-01 00:00:00", None]


def test_zoned_timestamps_cast_to_text_with_an_offset_or_the_zone_abbreviation():
    noon = ketch.from_pydict({"t": [D(2024, 1, 1, 12), D(2024, 7, 1, 12)]})
    utc = noon.select(col("t").cast(DataType.timestamp("us", "UTC")).cast(DataType.string()).alias("r"))
    assert utc.to_pydict()["r"] == ["2024-01-01 12:00:00 +00:00", "2024-07-01 12:00:00 +00:00"]
    ny = noon.select(
        col("t").cast(DataType.timestamp("us", "America/New_York")).cast(DataType.string()).alias("r")
    )
    assert ny.to_pydict()["r"] == ["2024-01-01 07:00:00 EST", "2024-07-01 08:00:00 EDT"]


def test_dates_cast_to_text_without_zero_padding():
    df = ketch.from_pydict(
        {"d": [dt.date(5, 1, 1), dt.date(2024, 12, 9), dt.date(1, 1, 1), dt.date(2024, 10, 10), None]}
    )
    assert df.select(col("d").cast(DataType.string()).alias("r")).to_pydict()["r"] == [
        "5-1-1",
        "2024-12-9",
        "1-1-1",
        "2024-10-10",
        None,
    ]


def test_a_date_moved_by_a_duration_stays_a_date():
    df = ketch.from_pydict(
        {
            "d": [dt.date(2024, 2, 29), dt.date(2023, 1, 1), None],
            "td": [dt.timedelta(days=1, hours=2), dt.timedelta(seconds=-1), dt.timedelta(days=1)],
        }
    )
    out = df.select(
        (col("d") + col("td")).alias("a"),
        (col("d") - col("td")).alias("s"),
        (col("td") + col("d")).alias("r"),
    )
    assert out.schema()["a"].dtype == DataType.date()
    assert out.to_pydict() == {
        "a": [dt.date(2024, 3, 1), dt.date(2023, 1, 1), None],
        "s": [dt.date(2024, 2, 28), dt.date(2023, 1, 1), None],
        "r": [dt.date(2024, 3, 1), dt.date(2023, 1, 1), None],
    }
