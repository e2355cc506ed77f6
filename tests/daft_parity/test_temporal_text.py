"""``strftime`` without a format prints timestamps as Daft 0.7.26 does (chrono's RFC 3339 with
automatic fraction digits; the expected strings were read from Daft running the same query)."""

from __future__ import annotations

import datetime

import pytest

import ketch
from ketch import DataType, col
from ketch.functions import strftime

MICROS = (0, 120000, 100, 123456)
TS = [datetime.datetime(2024, 1, 2, 3, 4, 5, us) for us in MICROS]


@pytest.mark.parametrize(
    ("dtype", "want"),
    [
        (None, ["2024-01-02T03:04:05", "2024-01-02T03:04:05.120", "2024-01-02T03:04:05.000100",
                "2024-01-02T03:04:05.123456"]),
        (DataType.timestamp("ms"), ["2024-01-02T03:04:05", "2024-01-02T03:04:05.120", "2024-01-02T03:04:05",
                                    "2024-01-02T03:04:05.123"]),
        (DataType.timestamp("ns"), ["2024-01-02T03:04:05", "2024-01-02T03:04:05.120",
                                    "2024-01-02T03:04:05.000100", "2024-01-02T03:04:05.123456"]),
        (DataType.timestamp("s"), ["2024-01-02T03:04:05"] * 4),
        (DataType.timestamp("us", "UTC"), ["2024-01-02T03:04:05Z", "2024-01-02T03:04:05.120Z",
                                           "2024-01-02T03:04:05.000100Z", "2024-01-02T03:04:05.123456Z"]),
        (DataType.timestamp("us", "America/New_York"),
         ["2024-01-01T22:04:05-05:00", "2024-01-01T22:04:05.120-05:00", "2024-01-01T22:04:05.000100-05:00",
          "2024-01-01T22:04:05.123456-05:00"]),
    ],
)  # fmt: skip
def test_default_strftime_is_daft_text(dtype, want) -> None:
    t = col("t") if dtype is None else col("t").cast(dtype)
    df = ketch.from_pydict({"t": [*TS, None]})
    assert df.select(strftime(t)).to_pydict()["t"] == [*want, None]


def test_default_strftime_of_times_before_the_epoch_and_dates() -> None:
    df = ketch.from_pydict(
        {"t": [datetime.datetime(1969, 12, 31, 23, 59, 59, 500000)], "d": [datetime.date(2024, 1, 2)]}
    )
    got = df.select(strftime(col("t")), strftime(col("d")).alias("d")).to_pydict()
    assert got == {"t": ["1969-12-31T23:59:59.500"], "d": ["2024-01-02"]}
