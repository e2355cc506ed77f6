"""Daft's Spark-style date functions (``ketch.functions.date_add``, ``add_months``, ``months_between``,
``make_date``, ...) against Python's datetime / zoneinfo / dateutil.relativedelta on random dates with
leap days, month ends, pre-1970 values, negative counts and nulls, plus Spark's documented examples
(https://spark.apache.org/docs/latest/api/sql/index.html)."""

from __future__ import annotations

import calendar
import datetime as dt
import random
from decimal import ROUND_HALF_UP, Decimal
from zoneinfo import ZoneInfo

import pyarrow as pa
import pytest
from dateutil.relativedelta import relativedelta

import ketch
from ketch import col
from ketch import functions as F

EDGE_DATES = [
    dt.date(2024, 2, 29),
    dt.date(2024, 1, 31),
    dt.date(2023, 1, 31),
    dt.date(2000, 2, 29),
    dt.date(1900, 2, 28),
    dt.date(1969, 12, 31),
    dt.date(1970, 1, 1),
    dt.date(2023, 12, 31),
    dt.date(2021, 3, 30),
]


def _random_dates(n: int, seed: int) -> list[dt.date | None]:
    rng = random.Random(seed)
    out: list[dt.date | None] = list(EDGE_DATES)
    while len(out) < n:
        # 1850-2036: Arrow's time-zone rules stop at 2037 where zoneinfo extrapolates DST.
        out.append(dt.date(1850, 1, 1) + dt.timedelta(days=rng.randrange(0, 187 * 365)))
    out[3::11] = [None] * len(out[3::11])
    return out


def _random_datetimes(n: int, seed: int) -> list[dt.datetime | None]:
    rng = random.Random(seed)
    out: list[dt.datetime | None] = []
    for d in _random_dates(n, seed):
        out.append(
            None
            if d is None
            else dt.datetime.combine(d, dt.time()) + dt.timedelta(microseconds=rng.randrange(86_400_000_000))
        )
    return out


def _run(data: dict, expr: ketch.Expression) -> tuple[pa.DataType, list]:
    table = ketch.from_pydict(data).select(expr.alias("r")).to_arrow()
    return table.schema.field("r").type, table.column("r").to_pylist()


@pytest.fixture
def dates_and_counts() -> dict:
    dates = _random_dates(200, 1)
    rng = random.Random(2)
    counts = [rng.randint(-400, 400) for _ in dates]
    counts[5::13] = [None] * len(counts[5::13])
    return {"d": dates, "n": counts, "ts": _random_datetimes(200, 3)}


def test_date_add_sub_diff(dates_and_counts: dict) -> None:
    d, n, ts = dates_and_counts["d"], dates_and_counts["n"], dates_and_counts["ts"]
    dtype, got = _run(dates_and_counts, F.date_add(col("d"), col("n")))
    assert dtype == pa.date32()
    assert got == [
        None if a is None or k is None else a + dt.timedelta(days=k) for a, k in zip(d, n, strict=True)
    ]
    assert _run(dates_and_counts, F.dateadd(col("d"), 7))[1] == [
        None if a is None else a + dt.timedelta(days=7) for a in d
    ]
    assert _run(dates_and_counts, F.date_sub(col("d"), col("n")))[1] == [
        None if a is None or k is None else a - dt.timedelta(days=k) for a, k in zip(d, n, strict=True)
    ]
    # A timestamp contributes its date, as Spark's date_add(timestamp, n).
    assert _run(dates_and_counts, F.date_add(col("ts"), 1))[1] == [
        None if t is None else t.date() + dt.timedelta(days=1) for t in ts
    ]
    dtype, got = _run(dates_and_counts, F.date_diff(col("ts"), col("d")))
    assert dtype == pa.int32()
    assert got == [
        None if t is None or a is None else (t.date() - a).days for t, a in zip(ts, d, strict=True)
    ]
    assert _run(dates_and_counts, F.datediff(col("d"), col("ts")))[1] == [
        None if t is None or a is None else (a - t.date()).days for t, a in zip(ts, d, strict=True)
    ]


def test_spark_documented_examples() -> None:
    data = {"x": [1]}
    # SELECT date_add('2016-07-30', 1) -> 2016-07-31; date_sub('2016-07-30', 1) -> 2016-07-29
    assert _run(data, F.date_add(ketch.lit(dt.date(2016, 7, 30)), 1))[1] == [dt.date(2016, 7, 31)]
    assert _run(data, F.date_sub(ketch.lit(dt.date(2016, 7, 30)), 1))[1] == [dt.date(2016, 7, 29)]
    # SELECT datediff('2009-07-31', '2009-07-30') -> 1
    assert _run(data, F.datediff(ketch.lit(dt.date(2009, 7, 31)), ketch.lit(dt.date(2009, 7, 30))))[1] == [1]
    # SELECT add_months('2016-08-31', 1) -> 2016-09-30
    assert _run(data, F.add_months(ketch.lit(dt.date(2016, 8, 31)), 1))[1] == [dt.date(2016, 9, 30)]
    # SELECT months_between('1997-02-28 10:30:00', '1996-10-30') -> 3.94959677
    end = ketch.lit(pa.scalar(dt.datetime(1997, 2, 28, 10, 30), pa.timestamp("us")))
    assert _run(data, F.months_between(end, ketch.lit(dt.date(1996, 10, 30))))[1] == [3.94959677]
    # SELECT last_day('2009-01-12') -> 2009-01-31
    assert _run(data, F.last_day(ketch.lit(dt.date(2009, 1, 12))))[1] == [dt.date(2009, 1, 31)]
    # SELECT next_day('2015-01-14', 'TU') -> 2015-01-20
    assert _run(data, F.next_day(ketch.lit(dt.date(2015, 1, 14)), "TU"))[1] == [dt.date(2015, 1, 20)]
    # SELECT make_date(2013, 7, 15) -> 2013-07-15; make_date(2019, 7, NULL) -> NULL
    assert _run(data, F.make_date(ketch.lit(2013), ketch.lit(7), ketch.lit(15)))[1] == [dt.date(2013, 7, 15)]
    # SELECT make_timestamp(2014, 12, 28, 6, 30, 45.887) -> 2014-12-28 06:30:45.887
    got = _run(data, F.make_timestamp(*(ketch.lit(v) for v in (2014, 12, 28, 6, 30, 45.887))))
    assert got == (pa.timestamp("us"), [dt.datetime(2014, 12, 28, 6, 30, 45, 887_000)])
    # SELECT make_timestamp(2019, 6, 30, 23, 59, 60) -> 2019-07-01 00:00:00
    got = _run(data, F.make_timestamp(*(ketch.lit(v) for v in (2019, 6, 30, 23, 59, 60))))
    assert got[1] == [dt.datetime(2019, 7, 1)]
    # SELECT date_from_unix_date(1) -> 1970-01-02
    assert _run(data, F.date_from_unix_date(ketch.lit(1)))[1] == [dt.date(1970, 1, 2)]
    # SELECT timestamp_seconds(1230219000) -> 2008-12-25 15:30:00 (UTC)
    assert _run(data, F.timestamp_seconds(ketch.lit(1230219000)))[1] == [dt.datetime(2008, 12, 25, 15, 30)]
    # SELECT timestamp_millis(1230219000123) -> 2008-12-25 15:30:00.123
    got = _run(data, F.timestamp_millis(ketch.lit(1230219000123)))
    assert got == (pa.timestamp("us"), [dt.datetime(2008, 12, 25, 15, 30, 0, 123_000)])
    # SELECT timestamp_micros(1230219000123123) -> 2008-12-25 15:30:00.123123
    assert _run(data, F.timestamp_micros(ketch.lit(1230219000123123)))[1] == [
        dt.datetime(2008, 12, 25, 15, 30, 0, 123_123)
    ]
    # SELECT from_utc_timestamp('2016-08-31', 'Asia/Seoul') -> 2016-08-31 09:00:00
    src = ketch.lit(pa.scalar(dt.datetime(2016, 8, 31), pa.timestamp("us")))
    assert _run(data, F.from_utc_timestamp(src, "Asia/Seoul"))[1] == [dt.datetime(2016, 8, 31, 9)]
    # SELECT to_utc_timestamp('2016-08-31', 'Asia/Seoul') -> 2016-08-30 15:00:00
    assert _run(data, F.to_utc_timestamp(src, "Asia/Seoul")) == (
        pa.timestamp("us"),
        [dt.datetime(2016, 8, 30, 15)],
    )


def test_add_months_literal_and_column(dates_and_counts: dict) -> None:
    d, n = dates_and_counts["d"], dates_and_counts["n"]
    months = [None if k is None else k // 10 for k in n]
    data = {**dates_and_counts, "m": months}
    dtype, got = _run(data, F.add_months(col("d"), col("m")))
    assert dtype == pa.date32()
    assert got == [
        None if a is None or k is None else a + relativedelta(months=k)
        for a, k in zip(d, months, strict=True)
    ]
    for k in (-25, -1, 1, 13):
        assert _run(data, F.add_months(col("d"), k))[1] == [
            None if a is None else a + relativedelta(months=k) for a in d
        ]
    ts = dates_and_counts["ts"]
    assert _run(data, F.add_months(col("ts"), col("m")))[1] == [
        None if t is None or k is None else t.date() + relativedelta(months=k)
        for t, k in zip(ts, months, strict=True)
    ]


def _months_between(end: dt.datetime, start: dt.datetime) -> float:
    """Spark's DateTimeUtils.monthsBetween(roundOff = true), written from its source."""
    month_diff = (end.year - start.year) * 12 + end.month - start.month
    last1 = end.day == calendar.monthrange(end.year, end.month)[1]
    last2 = start.day == calendar.monthrange(start.year, start.month)[1]
    if end.day == start.day or (last1 and last2):
        return float(month_diff)
    secs1 = end.hour * 3600 + end.minute * 60 + end.second
    secs2 = start.hour * 3600 + start.minute * 60 + start.second
    diff = month_diff + ((end.day - start.day) * 86400 + secs1 - secs2) / (31 * 86400)
    return float(Decimal(diff).quantize(Decimal("1e-8"), rounding=ROUND_HALF_UP))


def test_months_between(dates_and_counts: dict) -> None:
    d, ts = dates_and_counts["d"], dates_and_counts["ts"]
    dtype, got = _run(dates_and_counts, F.months_between(col("ts"), col("d")))
    assert dtype == pa.float64()
    want = [
        None if t is None or a is None else _months_between(t, dt.datetime.combine(a, dt.time()))
        for t, a in zip(ts, d, strict=True)
    ]
    assert got == want
    ts2 = list(reversed(ts))
    got = _run({"a": ts, "b": ts2}, F.months_between(col("a"), col("b")))[1]
    assert got == [
        None if a is None or b is None else _months_between(a, b) for a, b in zip(ts, ts2, strict=True)
    ]
    # Both month ends: whole months (Spark: months_between('2024-02-29', '2023-11-30') = 3.0).
    both_ends = F.months_between(ketch.lit(dt.date(2024, 2, 29)), ketch.lit(dt.date(2023, 11, 30)))
    assert _run({"x": [1]}, both_ends)[1] == [3.0]


def test_make_date_nulls_for_impossible_dates() -> None:
    rng = random.Random(4)
    years = [rng.randint(1600, 2400) for _ in range(300)] + [2023, 2024, 1900, 2000, 2024, 2024, None]
    months = [rng.randint(0, 13) for _ in range(300)] + [2, 2, 2, 2, 4, 12, 1]
    days = [rng.randint(0, 32) for _ in range(300)] + [29, 29, 29, 29, 31, 31, 1]

    def reference(y: int | None, m: int, d: int) -> dt.date | None:
        try:
            return None if y is None else dt.date(y, m, d)
        except ValueError:
            return None

    dtype, got = _run({"y": years, "m": months, "d": days}, F.make_date(col("y"), col("m"), col("d")))
    assert dtype == pa.date32()
    assert got == [reference(y, m, d) for y, m, d in zip(years, months, days, strict=True)]


def test_make_timestamp_and_ltz() -> None:
    rng = random.Random(5)
    rows = [
        (
            rng.randint(1900, 2037),
            rng.randint(1, 12),
            rng.randint(1, 31),
            rng.randint(-1, 24),
            rng.randint(0, 60),
        )
        for _ in range(200)
    ]
    secs = [rng.randrange(0, 61_000_000) / 1_000_000 for _ in rows]
    rows += [(2019, 6, 30, 23, 59), (2019, 6, 30, 23, 59), (2024, 2, 29, 0, 0), (2023, 2, 29, 0, 0)]
    secs += [60.0, 60.5, -0.5, 1.0]
    data = {k: [r[i] for r in rows] for i, k in enumerate("ymdhi")} | {"s": secs}

    def reference(y: int, m: int, d: int, h: int, mi: int, s: float) -> dt.datetime | None:
        try:
            micros = round(s * 1_000_000)
            if not 0 <= micros <= 60_000_000:
                return None
            return dt.datetime(y, m, d, h, mi) + dt.timedelta(microseconds=micros)
        except ValueError:
            return None

    parts = [col(k) for k in "ymdhis"]
    dtype, got = _run(data, F.make_timestamp(*parts))
    assert dtype == pa.timestamp("us")
    want = [reference(*r, s) for r, s in zip(rows, secs, strict=True)]
    assert got == want
    assert any(w is None for w in want) and any(w is not None for w in want)

    zone = "America/New_York"
    dtype, got = _run(data, F.make_timestamp_ltz(*parts, timezone=zone))
    assert dtype == pa.timestamp("us", "UTC")
    for g, w in zip(got, want, strict=True):
        if w is None:
            assert g is None
        elif (
            w.replace(tzinfo=ZoneInfo(zone)).utcoffset()
            == w.replace(tzinfo=ZoneInfo(zone), fold=1).utcoffset()
        ):
            assert g == w.replace(tzinfo=ZoneInfo(zone)).astimezone(dt.timezone.utc)
    dtype, got = _run(data, F.make_timestamp_ltz(*parts))
    assert got == [None if w is None else w.replace(tzinfo=dt.timezone.utc) for w in want]
    dtype, got = _run(data, F.make_timestamp(*parts, timezone="UTC"))
    assert dtype == pa.timestamp("us", "UTC")


def test_last_day_next_day(dates_and_counts: dict) -> None:
    d = dates_and_counts["d"]
    assert _run(dates_and_counts, F.last_day(col("d")))[1] == [
        None if a is None else a.replace(day=calendar.monthrange(a.year, a.month)[1]) for a in d
    ]
    for name, weekday in (("Monday", 0), ("wed", 2), ("SU", 6), ("Sat", 5)):
        want = [None if a is None else a + dt.timedelta(days=(weekday - a.weekday() - 1) % 7 + 1) for a in d]
        assert _run(dates_and_counts, F.next_day(col("d"), name))[1] == want
    with pytest.raises(ValueError, match="next_day"):
        F.next_day(col("d"), "Funday")


def test_unix_conversions() -> None:
    rng = random.Random(6)
    secs = [rng.randint(-3_000_000_000, 4_000_000_000) for _ in range(100)] + [None]
    data = {"s": secs, "ms": [None if s is None else s * 1000 + 7 for s in secs]}
    epoch = dt.datetime(1970, 1, 1)
    assert _run(data, F.timestamp_seconds(col("s"))) == (
        pa.timestamp("us"),
        [None if s is None else epoch + dt.timedelta(seconds=s) for s in secs],
    )
    assert _run(data, F.timestamp_millis(col("ms")))[1] == [
        None if s is None else epoch + dt.timedelta(milliseconds=s * 1000 + 7) for s in secs
    ]
    assert _run(data, F.from_unixtime(col("s")))[1] == [
        None if s is None else (epoch + dt.timedelta(seconds=s)).strftime("%Y-%m-%d %H:%M:%S") for s in secs
    ]
    assert _run(data, F.from_unixtime(col("s"), "%Y/%m/%d"))[1] == [
        None if s is None else (epoch + dt.timedelta(seconds=s)).strftime("%Y/%m/%d") for s in secs
    ]
    days = [None if s is None else s // 86400 for s in secs]
    assert _run({"n": days}, F.date_from_unix_date(col("n"))) == (
        pa.date32(),
        [None if n is None else dt.date(1970, 1, 1) + dt.timedelta(days=n) for n in days],
    )
    # Fractional seconds keep microseconds (Spark: timestamp_seconds(1230219000.123)).
    assert _run({"x": [1]}, F.timestamp_seconds(ketch.lit(1230219000.5)))[1] == [
        dt.datetime(2008, 12, 25, 15, 30, 0, 500_000)
    ]


def test_time_zone_shifts(dates_and_counts: dict) -> None:
    ts = dates_and_counts["ts"]
    for zone in ("Europe/London", "Asia/Kolkata", "America/Los_Angeles"):
        want = [
            None
            if t is None
            else t.replace(tzinfo=dt.timezone.utc).astimezone(ZoneInfo(zone)).replace(tzinfo=None)
            for t in ts
        ]
        dtype, got = _run(dates_and_counts, F.from_utc_timestamp(col("ts"), zone))
        assert dtype == pa.timestamp("us") and got == want
    # to_utc_timestamp inverts it on wall clocks that are neither skipped nor repeated.
    zone = "Asia/Kolkata"
    local = [None if t is None else t.replace(tzinfo=dt.timezone.utc).astimezone(ZoneInfo(zone)) for t in ts]
    data = {"l": [None if t is None else t.replace(tzinfo=None) for t in local]}
    assert _run(data, F.to_utc_timestamp(col("l"), zone))[1] == ts


def test_to_utc_timestamp_raises_in_dst_gap_and_overlap() -> None:
    zone = "America/New_York"
    for wall in (dt.datetime(2024, 3, 10, 2, 30), dt.datetime(2024, 11, 3, 1, 30)):
        with pytest.raises(ValueError, match="to_utc_timestamp"):
            _run({"t": [wall]}, F.to_utc_timestamp(col("t"), zone))
    ok = dt.datetime(2024, 7, 1, 12)
    assert _run({"t": [ok]}, F.to_utc_timestamp(col("t"), zone))[1] == [dt.datetime(2024, 7, 1, 16)]


def test_datepart_trunc_and_current() -> None:
    ts = _random_datetimes(50, 7)
    data = {"ts": ts}
    assert _run(data, F.datepart("year", col("ts")))[1] == [None if t is None else t.year for t in ts]
    assert _run(data, F.datepart("Day Of Month", col("ts")))[1] == [None if t is None else t.day for t in ts]
    assert _run(data, F.datepart("weekofyear", col("ts")))[1] == [
        None if t is None else t.isocalendar()[1] for t in ts
    ]
    with pytest.raises(ValueError, match="Unsupported datepart"):
        F.datepart("fortnight", col("ts"))
    assert _run(data, F.trunc(col("ts"), "hour"))[1] == [
        None if t is None else t.replace(minute=0, second=0, microsecond=0) for t in ts
    ]
    before = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    dtype, got = _run({"x": [1, 2]}, F.current_timestamp())
    after = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    assert dtype == pa.timestamp("us") and all(before <= g <= after for g in got)
    dtype, got = _run({"x": [1, 2]}, F.current_date())
    assert dtype == pa.date32() and got[0] in (before.date(), after.date())
    assert _run({"x": [1]}, F.current_timezone())[1] == ["UTC"]


def test_plan_time_type_errors() -> None:
    df = ketch.from_pydict({"s": ["a"], "d": [dt.date(2020, 1, 1)]})
    for expr in (
        F.make_date(col("s"), col("s"), col("s")),
        F.add_months(col("s"), col("d")),
        F.months_between(col("s"), col("d")),
        F.to_utc_timestamp(col("d"), "UTC"),
    ):
        with pytest.raises(Exception, match="cannot apply|expects"):
            df.select(expr).collect()
    with pytest.raises(Exception, match="unknown time zone"):
        df.select(F.to_utc_timestamp(col("d").cast(pa.timestamp("us")), "Mars/Olympus")).collect()


def test_convert_timezone_takes_sparks_argument_order() -> None:
    from datetime import datetime, timezone

    from ketch.functions import convert_time_zone, convert_timezone

    df = ketch.from_pydict({"ts": [datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc), None]})
    spark = df.select(convert_timezone("Asia/Tokyo", df["ts"]).alias("t")).to_pydict()["t"]
    daft = df.select(convert_time_zone(df["ts"], "Asia/Tokyo").alias("t")).to_pydict()["t"]
    assert spark == daft
    assert spark[0].utcoffset().total_seconds() == 9 * 3600 and spark[0].hour == 21 and spark[1] is None
