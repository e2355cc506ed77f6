"""Temporal kernels (``.dt`` and ``ketch.functions``) against Python's datetime / zoneinfo on random
timestamps with nulls, leap days, pre-1970 values and DST-crossing time zones."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pytest

import ketch
from ketch import DataType, TimeUnit, col
from ketch import functions as F

EPOCH = dt.datetime(1970, 1, 1)
EDGES = [
    dt.datetime(2024, 2, 29, 23, 59, 59, 999_999),  # leap day
    dt.datetime(2000, 2, 29, 0, 0, 0),
    dt.datetime(1969, 12, 31, 23, 59, 59, 500_000),  # before the epoch
    dt.datetime(1900, 1, 1, 0, 0, 0, 1),
    dt.datetime(2024, 3, 10, 7, 30, 0),  # New York spring-forward instant (UTC)
    dt.datetime(2024, 11, 3, 6, 30, 0),  # New York fall-back hour (UTC)
    dt.datetime(2020, 12, 31, 12, 0, 0),  # ISO week 53
    dt.datetime(2021, 1, 3, 12, 0, 0),  # ISO week 53 of 2020
]


@pytest.fixture
def stamps(rng: np.random.Generator) -> list[dt.datetime | None]:
    micros = rng.integers(-2_208_988_800_000_000, 4_102_444_800_000_000, size=200)  # 1900 .. 2100
    values: list[dt.datetime | None] = [EPOCH + dt.timedelta(microseconds=int(u)) for u in micros]
    values += EDGES
    for i in range(0, len(values), 17):
        values[i] = None
    return values


def _before_2038(values: list) -> list:
    """Arrow's time-zone database (Howard Hinnant's date library over the system tzdata files)
    stops applying daylight saving time after 2037, where zoneinfo follows the zone's rule; zoned
    comparisons stay inside the range both agree on."""
    return [v for v in values if v is None or v.year < 2038]


def _run(values: list, expr: ketch.Expression, dtype: pa.DataType | None = None) -> list:
    array = pa.array(values, type=dtype or pa.timestamp("us"))
    return ketch.from_arrow(pa.table({"t": array})).select(expr.alias("out")).to_pydict()["out"]


def _expect(values: list, fn) -> list:
    return [None if v is None else fn(v) for v in values]


FIELDS = {
    "year": lambda v: v.year,
    "quarter": lambda v: (v.month - 1) // 3 + 1,
    "month": lambda v: v.month,
    "day": lambda v: v.day,
    "day_of_month": lambda v: v.day,
    "day_of_week": lambda v: v.weekday(),
    "day_of_year": lambda v: v.timetuple().tm_yday,
    "week_of_year": lambda v: v.isocalendar()[1],
    "hour": lambda v: v.hour,
    "minute": lambda v: v.minute,
    "second": lambda v: v.second,
    "millisecond": lambda v: v.microsecond // 1000,
    "microsecond": lambda v: v.microsecond,
    "nanosecond": lambda v: v.microsecond * 1000,
    "date": lambda v: v.date(),
    "time": lambda v: v.time(),
}


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_fields_match_python_datetime(stamps, name):
    expected = _expect(stamps, FIELDS[name])
    assert _run(stamps, getattr(col("t").dt, name)()) == expected
    # The free function is the same kernel.
    assert _run(stamps, getattr(F, name)(col("t"))) == expected


def test_field_dtypes_follow_daft():
    df = ketch.from_pydict({"t": [dt.datetime(2024, 1, 1)]})
    out = df.select(
        col("t").dt.year().alias("y"),
        col("t").dt.hour().alias("h"),
        col("t").dt.date().alias("d"),
        col("t").dt.time().alias("tm"),
    )
    schema = out.schema()
    assert schema.field("y").type == pa.int32()
    assert schema.field("h").type == pa.uint32()
    assert schema.field("d").type == pa.date32()
    assert schema.field("tm").type == pa.time64("us")


@pytest.mark.parametrize("zone", ["America/New_York", "Europe/London", "Asia/Kolkata", "Australia/Lord_Howe"])
def test_fields_of_zoned_timestamps_read_the_local_clock(stamps, zone):
    tz = ZoneInfo(zone)
    stamps = _before_2038(stamps)
    utc = [None if v is None else v.replace(tzinfo=dt.timezone.utc) for v in stamps]
    local = [None if v is None else v.astimezone(tz).replace(tzinfo=None) for v in utc]
    dtype = pa.timestamp("us", tz=zone)
    for name in ("hour", "minute", "day", "date", "day_of_week", "time"):
        assert _run(utc, getattr(col("t").dt, name)(), dtype) == _expect(local, FIELDS[name]), name


def test_fields_of_dates(rng):
    days = rng.integers(-40_000, 40_000, size=100)
    values = [dt.date(1970, 1, 1) + dt.timedelta(days=int(d)) for d in days] + [dt.date(2024, 2, 29), None]
    for name in ("year", "month", "day", "day_of_week", "day_of_year", "week_of_year", "quarter"):
        assert _run(values, getattr(col("t").dt, name)(), pa.date32()) == _expect(values, FIELDS[name]), name
    assert _run(values, col("t").dt.date(), pa.date32()) == values


@pytest.mark.parametrize(
    "chrono,python",
    [
        ("%Y-%m-%d", "%Y-%m-%d"),
        ("%Y/%m/%d %H:%M:%S", "%Y/%m/%d %H:%M:%S"),
        ("%d %b %Y, %I %p", "%d %b %Y, %I %p"),
        ("%j %A %B", "%j %A %B"),
    ],
)
def test_strftime_matches_python(stamps, chrono, python):
    assert _run(stamps, col("t").dt.strftime(chrono)) == _expect(stamps, lambda v: v.strftime(python))


def _daft_iso(v: dt.datetime) -> str:
    """Daft's default timestamp text: the fraction only where there is one, in 3 or 6 digits."""
    text = v.strftime("%Y-%m-%dT%H:%M:%S")
    if v.microsecond == 0:
        return text
    return text + (f".{v.microsecond // 1000:03d}" if v.microsecond % 1000 == 0 else f".{v.microsecond:06d}")


def test_strftime_fractions_and_iso_default(stamps):
    assert _run(stamps, col("t").dt.strftime("%H:%M:%S%.3f")) == _expect(
        stamps, lambda v: v.strftime("%H:%M:%S.") + f"{v.microsecond // 1000:03d}"
    )
    assert _run(stamps, F.strftime(col("t"))) == _expect(stamps, _daft_iso)
    dates = [dt.date(2023, 1, 1), None, dt.date(2024, 2, 29)]
    assert _run(dates, col("t").dt.strftime(), pa.date32()) == ["2023-01-01", None, "2024-02-29"]
    assert _run(dates, col("t").dt.strftime("%m/%d/%Y"), pa.date32()) == ["01/01/2023", None, "02/29/2024"]


def test_strftime_bad_pattern_fails_at_plan_time():
    df = ketch.from_pydict({"t": [dt.datetime(2024, 1, 1)]})
    with pytest.raises(ValueError, match="%Q"):
        df.select(col("t").dt.strftime("%Y %Q"))


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_to_unix_epoch_floors_like_python(stamps, unit):
    per = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": 1}[unit]
    scale = 1000 if unit == "ns" else 1

    def expected(v: dt.datetime) -> int:
        micros = (v - EPOCH) // dt.timedelta(microseconds=1)
        return micros * scale if unit == "ns" else micros // per

    assert _run(stamps, col("t").dt.to_unix_epoch(unit)) == _expect(stamps, expected)
    assert _run(stamps, F.to_unix_epoch(col("t"), TimeUnit.from_str(unit))) == _expect(stamps, expected)


def test_to_unix_epoch_of_dates_and_default_unit():
    dates = [dt.date(2001, 1, 1), dt.date(1969, 12, 31), None]
    assert _run(dates, col("t").dt.to_unix_epoch("ns"), pa.date32()) == [
        978307200000000000,
        -86400 * 10**9,
        None,
    ]
    assert _run(dates, col("t").dt.to_unix_epoch(), pa.date32()) == [978307200, -86400, None]


@pytest.mark.parametrize(
    "interval", ["1 second", "15 minutes", "1 hour", "6 hours", "1 day", "1 week", "250 milliseconds"]
)
def test_truncate_floors_from_the_epoch(stamps, interval):
    from ketch.expressions.temporal import interval_nanoseconds

    step = interval_nanoseconds(interval) // 1000

    def expected(v: dt.datetime) -> dt.datetime:
        micros = (v - EPOCH) // dt.timedelta(microseconds=1)
        return EPOCH + dt.timedelta(microseconds=micros // step * step)

    assert _run(stamps, col("t").dt.truncate(interval)) == _expect(stamps, expected)
    assert _run(stamps, F.date_trunc(interval, col("t"))) == _expect(stamps, expected)


def test_truncate_relative_to_and_in_local_time():
    origin = dt.datetime(2024, 1, 1, 0, 7)
    values = [dt.datetime(2024, 1, 1, 1, 0), dt.datetime(2024, 1, 1, 0, 0), None]
    assert _run(values, col("t").dt.truncate("1 hour", origin)) == [
        dt.datetime(2024, 1, 1, 0, 7),
        dt.datetime(2023, 12, 31, 23, 7),
        None,
    ]
    zone = "America/New_York"
    utc = [dt.datetime(2024, 3, 10, 15, 30, tzinfo=dt.timezone.utc)]  # 11:30 local, after DST began
    out = _run(utc, col("t").dt.truncate("1 day"), pa.timestamp("us", tz=zone))
    assert out[0] == dt.datetime(2024, 3, 10, 0, 0, tzinfo=ZoneInfo(zone))


def test_truncate_bad_interval():
    with pytest.raises(ValueError, match="3 fortnights"):
        col("t").dt.truncate("3 fortnights")
    df = ketch.from_arrow(pa.table({"t": pa.array([0], pa.timestamp("s"))}))
    with pytest.raises(ValueError, match="1 millisecond"):
        df.select(col("t").dt.truncate("1 millisecond"))


@pytest.mark.parametrize("zone", ["America/New_York", "Europe/Berlin", "+05:30"])
def test_convert_and_replace_time_zone_match_zoneinfo(stamps, zone):
    stamps = _before_2038(stamps)
    tz = ZoneInfo(zone) if "/" in zone else dt.timezone(dt.timedelta(hours=5, minutes=30))
    # Naive values read as UTC, then shown in `zone`: same instants.
    out = _run(stamps, col("t").dt.convert_time_zone(zone, from_timezone="UTC"))
    assert out == _expect(stamps, lambda v: v.replace(tzinfo=dt.timezone.utc).astimezone(tz))
    # Zoned -> naive keeps the local wall clock.
    zoned = [None if v is None else v.replace(tzinfo=dt.timezone.utc) for v in stamps]
    naive = _run(zoned, F.replace_time_zone(col("t")), pa.timestamp("us", tz=zone))
    assert naive == _expect(zoned, lambda v: v.astimezone(tz).replace(tzinfo=None))


def test_replace_time_zone_moves_a_dst_gap_time_forward_and_an_overlap_to_its_first_instant():
    zone = "America/New_York"
    values = [dt.datetime(2024, 3, 10, 2, 30), dt.datetime(2024, 7, 1, 12, 0)]  # 02:30 does not exist
    out = _run(values, col("t").dt.replace_time_zone(zone))
    assert out[1] == dt.datetime(2024, 7, 1, 12, 0, tzinfo=ZoneInfo(zone))
    assert out[0].astimezone(dt.timezone.utc) == dt.datetime(2024, 3, 10, 7, 0, tzinfo=dt.timezone.utc)
    overlap = _run([dt.datetime(2024, 11, 3, 1, 30)], col("t").dt.replace_time_zone(zone))
    assert overlap[0].astimezone(dt.timezone.utc) == dt.datetime(2024, 11, 3, 5, 30, tzinfo=dt.timezone.utc)


def test_unknown_time_zone_fails_at_plan_time_naming_it():
    df = ketch.from_pydict({"t": [dt.datetime(2024, 1, 1)]})
    with pytest.raises(ValueError, match="Mars/Olympus"):
        df.select(col("t").dt.convert_time_zone("Mars/Olympus", "UTC"))
    with pytest.raises(ValueError, match="Mars/Olympus"):
        df.select(col("t").dt.replace_time_zone("Mars/Olympus"))
    with pytest.raises(ValueError, match="from_timezone"):
        df.select(col("t").dt.convert_time_zone("UTC"))


@pytest.mark.parametrize(
    "name,unit_us",
    [
        ("total_seconds", 1_000_000),
        ("total_milliseconds", 1_000),
        ("total_microseconds", 1),
        ("total_minutes", 60_000_000),
        ("total_hours", 3_600_000_000),
        ("total_days", 86_400_000_000),
    ],
)
def test_duration_totals_truncate_toward_zero(rng, name, unit_us):
    micros = [int(u) for u in rng.integers(-(10**13), 10**13, size=100)] + [1, -1, 999_999, -1_000_001]
    values = [dt.timedelta(microseconds=u) for u in micros] + [None]

    def expected(td: dt.timedelta) -> int:
        us = td // dt.timedelta(microseconds=1)
        return abs(us) // unit_us * (1 if us >= 0 else -1)

    assert _run(values, getattr(col("t").dt, name)(), pa.duration("us")) == _expect(values, expected)
    assert _run(values, getattr(F, name)(col("t")), pa.duration("us")) == _expect(values, expected)
    assert _run(values[:3], col("t").dt.total_nanoseconds(), pa.duration("us")) == [
        m * 1000 for m in micros[:3]
    ]


def test_date_arithmetic_with_durations():
    ts = [dt.datetime(2024, 2, 28, 12), dt.datetime(2023, 12, 31, 23, 59), None]
    df = ketch.from_pydict({"t": ts})
    out = df.select(
        (col("t") + dt.timedelta(days=1, hours=1)).alias("plus"),
        (col("t") - dt.timedelta(minutes=1)).alias("minus"),
        (col("t") - col("t")).alias("zero"),
    ).to_pydict()
    assert out["plus"] == [dt.datetime(2024, 2, 29, 13), dt.datetime(2024, 1, 2, 0, 59), None]
    assert out["minus"] == [dt.datetime(2024, 2, 28, 11, 59), dt.datetime(2023, 12, 31, 23, 58), None]
    assert out["zero"] == [dt.timedelta(0), dt.timedelta(0), None]


def test_wrong_type_fails_at_plan_time_naming_function_expression_and_type():
    df = ketch.from_pydict({"s": ["2024-01-01"]})
    for expr, function in [
        (col("s").dt.strftime("%Y"), "strftime"),
        (col("s").dt.date(), "date"),
        (col("s").dt.truncate("1 day"), "truncate"),
        (col("s").dt.total_seconds(), "total"),
        (col("s").dt.hour(), "hour"),
    ]:
        with pytest.raises(TypeError, match=function) as info:
            df.select(expr)
        assert "col(s)" in str(info.value) and "string" in str(info.value)


def test_timestamp_dtype_with_zone_round_trips_through_parquet(tmp_path):
    values = [dt.datetime(2024, 3, 10, 7, 30, tzinfo=dt.timezone.utc), None]
    df = ketch.from_pydict({"t": values}).with_column(
        "t", col("t").cast(DataType.timestamp(TimeUnit.us(), "America/New_York"))
    )
    df.write_parquet(str(tmp_path))
    back = ketch.read_parquet(str(tmp_path))
    assert back.schema().field("t").type == pa.timestamp("us", tz="America/New_York")
    assert back.select(col("t").dt.hour().alias("h")).to_pydict()["h"] == [3, None]


@pytest.mark.parametrize("months,days,hours", [(1, 0, 0), (-13, 3, 0), (0, -40, 5), (25, 1, -30), (0, 0, 0)])
def test_interval_arithmetic_matches_relativedelta(stamps, months, days, hours):
    from dateutil.relativedelta import relativedelta

    step = relativedelta(months=months, days=days, hours=hours)
    iv = ketch.interval(months=months, days=days, hours=hours)
    assert _run(stamps, col("t") + iv) == _expect(stamps, lambda v: v + step)
    assert _run(stamps, col("t") - iv) == _expect(stamps, lambda v: v - step)
    dates = [None if v is None else v.date() for v in stamps]
    date_step = relativedelta(months=months, days=days)
    date_iv = ketch.interval(months=months, days=days)
    assert _run(dates, col("t") + date_iv, pa.date32()) == _expect(dates, lambda v: v + date_step)


def test_interval_clamps_to_month_end_and_follows_the_local_clock():
    dates = [dt.date(2024, 1, 31), dt.date(2023, 1, 31), dt.date(2024, 2, 29)]
    out = _run(dates, col("t") + F.interval(months=1), pa.date32())
    assert out == [dt.date(2024, 2, 29), dt.date(2023, 2, 28), dt.date(2024, 3, 29)]
    assert _run(dates[2:], col("t") + F.interval(years=1), pa.date32()) == [dt.date(2025, 2, 28)]
    zone = "America/New_York"
    before_dst = [dt.datetime(2024, 3, 9, 17, 0, tzinfo=dt.timezone.utc)]  # 12:00 local, EST
    out = _run(before_dst, col("t") + ketch.interval(days=1), pa.timestamp("us", tz=zone))
    assert out[0] == dt.datetime(2024, 3, 10, 12, 0, tzinfo=ZoneInfo(zone))  # 12:00 local, EDT
    with pytest.raises(TypeError, match="interval arithmetic"):
        ketch.from_pydict({"s": ["x"]}).select(col("s") + ketch.interval(days=1))
