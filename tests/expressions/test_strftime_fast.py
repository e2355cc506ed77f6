"""``dt.strftime`` with fixed-width numeric specifiers (Ketch's direct formatter, no ostream per value)
against fields computed by Python's datetime: every timestamp unit, years 1-9999, pre-1970 values,
dates, nulls, sliced arrays; zoned timestamps and other specifiers keep Arrow's path."""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import ketch
from ketch import col

EPOCH = dt.datetime(1970, 1, 1)
FORMATS = ["%Y-%m-%d %H:%M:%S", "%F %T", "%y%m%d-%j", "[%H%%%M]", "%Y", "plain text", "%d/%m/%Y %H:%M"]
UNITS = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def expected(value: dt.datetime | dt.date | None, fmt: str) -> str | None:
    """The chrono rendering of ``fmt``, field by field from Python's calendar (%Y zero-padded to 4)."""
    if value is None:
        return None
    when = value if isinstance(value, dt.datetime) else dt.datetime(value.year, value.month, value.day)
    fields = {
        "Y": f"{when.year:04d}",
        "y": f"{when.year % 100:02d}",
        "m": f"{when.month:02d}",
        "d": f"{when.day:02d}",
        "H": f"{when.hour:02d}",
        "M": f"{when.minute:02d}",
        "S": f"{when.second:02d}",
        "j": f"{when.timetuple().tm_yday:03d}",
        "F": f"{when.year:04d}-{when.month:02d}-{when.day:02d}",
        "T": f"{when.hour:02d}:{when.minute:02d}:{when.second:02d}",
        "%": "%",
    }
    return re.sub(r"%(.)", lambda m: fields[m.group(1)], fmt)


def strftime(array: pa.Array, fmt: str) -> list[str | None]:
    out = ketch.from_arrow(pa.table({"t": array})).select(col("t").dt.strftime(fmt).alias("r")).to_arrow()
    assert out.schema.field("r").type == pa.large_string()
    return out.column("r").to_pylist()


@pytest.mark.parametrize("unit", list(UNITS))
def test_fixed_width_formats_match_python(rng: np.random.Generator, unit: str) -> None:
    per_second = UNITS[unit]
    low, high = (dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59))
    if unit == "ns":
        low, high = dt.datetime(1678, 1, 1), dt.datetime(2261, 12, 31)
    seconds = rng.integers(int((low - EPOCH).total_seconds()), int((high - EPOCH).total_seconds()), 400)
    ticks = seconds * per_second + rng.integers(0, per_second, 400)
    ticks[:4] = [0, -1, per_second * 86_400 - 1, -per_second * 86_400]  # around the epoch
    mask = rng.random(400) < 0.1
    array = pa.array(ticks, pa.timestamp(unit), mask=mask)
    values = [
        None if m else EPOCH + dt.timedelta(seconds=int(t // per_second))
        for t, m in zip(ticks, mask, strict=True)
    ]
    for fmt in FORMATS:
        assert strftime(array, fmt) == [expected(v, fmt) for v in values], fmt
        assert strftime(array.slice(13, 200), fmt) == [expected(v, fmt) for v in values[13:213]], fmt


def test_dates_default_and_fixed_formats(rng: np.random.Generator) -> None:
    days = rng.integers(
        (dt.date(1, 1, 1) - EPOCH.date()).days, (dt.date(9999, 12, 31) - EPOCH.date()).days, 300
    )
    values = [None if i % 7 == 0 else EPOCH.date() + dt.timedelta(days=int(d)) for i, d in enumerate(days)]
    array = pa.array(values, pa.date32())
    assert strftime(array, "%Y-%m-%d %H:%M:%S") == [expected(v, "%Y-%m-%d %H:%M:%S") for v in values]
    out = ketch.from_arrow(pa.table({"t": array})).select(col("t").dt.strftime().alias("r")).to_pydict()["r"]
    assert out == [expected(v, "%Y-%m-%d") for v in values]


def test_zoned_and_other_specifiers_keep_arrows_output() -> None:
    instants = [dt.datetime(2024, 3, 10, 7, 30), None, dt.datetime(1969, 12, 31, 23, 59, 59)]
    zoned = pa.array(instants, pa.timestamp("us", tz="UTC")).cast(pa.timestamp("us", tz="America/New_York"))
    assert strftime(zoned, "%Y-%m-%d %H:%M") == ["2024-03-10 03:30", None, "1969-12-31 18:59"]
    naive = pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 678_000), None], pa.timestamp("us"))
    assert strftime(naive, "%a %b %e") == pc.strftime(naive, "%a %b %e", locale="C").to_pylist()
    assert strftime(naive, "%H:%M:%S%.3f") == ["03:04:05.678", None]


def test_years_past_9999_take_arrows_path() -> None:
    seconds = int((dt.datetime(9999, 12, 31, 23, 59, 59) - EPOCH).total_seconds()) + 86_400 * 400
    array = pa.array([seconds, 0], pa.timestamp("s"))
    assert strftime(array, "%Y-%m-%d") == pc.strftime(array, "%Y-%m-%d", locale="C").to_pylist()
