"""Daft's Spark-style date/time free functions (``from ketch.functions import date_add, add_months,
...``), with Daft 0.7.26's names, signatures and return types.

Most are compositions of native kernels (casts between date32 and int32, checked integer arithmetic,
``Expression.dt`` fields, ``dt.strftime``, calendar-interval arithmetic, time-zone conversion), so the
work stays in C++. The ones no composition gets right (``make_date`` / ``make_timestamp`` with null for
impossible dates, ``add_months`` with a column of counts, ``months_between`` with Spark's rounding,
``to_utc_timestamp`` raising in DST gaps and overlaps) call the ``spark_*`` kernels of
``cpp/ketch/functions/temporal/spark_date_functions.cc``.

Semantics follow Daft's docstrings, which follow Spark's SQL reference
(https://spark.apache.org/docs/latest/api/sql/index.html).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ketch.expressions.expression import Expression, _expr, lit
from ketch.expressions.temporal import interval
from ketch.functions import temporal as _t


def _days(expr: Expression) -> Expression:
    """Days since 1970-01-01 (int32) of a date or timestamp (the local date of a zoned one)."""
    return _expr(expr).dt.date().cast(pa.int32())


def _from_days(days: Expression) -> Expression:
    """date32 from a day count; a count outside int32 is a cast error naming the expression."""
    return days.cast(pa.int32()).cast(pa.date32())


def date_add(expr: Expression, days: Expression | int) -> Expression:
    """``expr`` moved by ``days`` days (date32). ``expr``: a date or timestamp (the timestamp's date is
    used, as Spark does); ``days``: an integer expression or int, may be negative. Null in either
    gives null. A result outside date32's range raises an overflow/cast error."""
    return _from_days(_days(expr) + _expr(days))


def dateadd(expr: Expression, days: Expression | int) -> Expression:
    """Alias for :func:`date_add`."""
    return date_add(expr, days)


def date_sub(expr: Expression, days: Expression | int) -> Expression:
    """``expr`` moved back by ``days`` days (date32); see :func:`date_add`."""
    return _from_days(_days(expr) - _expr(days))


def date_diff(end: Expression, start: Expression) -> Expression:
    """Days from ``start`` to ``end`` (int32, ``end - start``); dates or timestamps (their dates)."""
    return (_days(end) - _days(start)).cast(pa.int32())


def datediff(end: Expression, start: Expression) -> Expression:
    """Alias for :func:`date_diff`."""
    return date_diff(end, start)


def datepart(part: str, expr: Expression) -> Expression:
    """The field ``part`` of ``expr`` (Daft's table of names: ``"year"``, ``"dayofmonth"``,
    ``"weekofyear"``, ``"hour"``, ...; case and spaces ignored). Raises ValueError listing the
    supported names for any other ``part``."""
    extractors = {
        "date": _t.date,
        "year": _t.year,
        "quarter": _t.quarter,
        "month": _t.month,
        "day": _t.day,
        "day_of_week": _t.day_of_week,
        "dayofweek": _t.day_of_week,
        "weekday": _t.day_of_week,
        "day_of_month": _t.day_of_month,
        "dayofmonth": _t.day_of_month,
        "day_of_year": _t.day_of_year,
        "dayofyear": _t.day_of_year,
        "week_of_year": _t.week_of_year,
        "weekofyear": _t.week_of_year,
        "week": _t.week_of_year,
        "hour": _t.hour,
        "minute": _t.minute,
        "second": _t.second,
        "millisecond": _t.millisecond,
        "microsecond": _t.microsecond,
        "nanosecond": _t.nanosecond,
        "unix_date": _t.unix_date,
    }
    normalized = part.strip().lower().replace(" ", "_")
    if normalized not in extractors:
        supported = ", ".join(sorted(extractors))
        raise ValueError(f"Unsupported datepart value: {part!r}. Supported values: {supported}")
    return extractors[normalized](expr)


def add_months(expr: Expression, months: Expression | int) -> Expression:
    """``expr``'s date moved by ``months`` months (date32), Spark's rule: a day past the end of the
    target month is clamped to its last day (2024-01-31 + 1 -> 2024-02-29). A timestamp's time of
    day is dropped first. ``months``: an integer expression or int, may be negative; null gives null.
    An int uses the calendar-interval kernel; a column uses the native ``spark_add_months``."""
    if isinstance(months, int) and not isinstance(months, bool):
        return _expr(expr).dt.date() + interval(months=months)
    return Expression._call("spark_add_months", _expr(expr), _expr(months))


def months_between(end: Expression, start: Expression) -> Expression:
    """Months from ``start`` to ``end`` (float64), Spark's rule: a whole number when both days of
    month are equal or both are the last day of their months; otherwise
    ``months + (day_end - day_start + (seconds_end - seconds_start) / 86400) / 31`` rounded half up to
    8 decimal places. Dates or timestamps (zoned ones on their wall clock)."""
    return Expression._call("spark_months_between", _expr(end), _expr(start))


def date_from_unix_date(expr: Expression) -> Expression:
    """date32 from days since 1970-01-01 (an integer expression); outside int32 raises."""
    return _from_days(_expr(expr))


def timestamp_seconds(expr: Expression) -> Expression:
    """timestamp[us] from seconds since the epoch (integer or floating; fractions kept to the
    microsecond, truncated toward zero as Spark does; integers stay exact: whole seconds are exact in
    float64 up to ~18,000 years from 1970)."""
    micros = Expression._call("trunc", _expr(expr) * 1_000_000)
    return micros.cast(pa.int64()).cast(pa.timestamp("us"))


def timestamp_millis(expr: Expression) -> Expression:
    """timestamp[us] from milliseconds since the epoch (an integer expression)."""
    return (_expr(expr).cast(pa.int64()) * 1_000).cast(pa.timestamp("us"))


def timestamp_micros(expr: Expression) -> Expression:
    """timestamp[us] from microseconds since the epoch (an integer expression)."""
    return _expr(expr).cast(pa.int64()).cast(pa.timestamp("us"))


def from_unixtime(expr: Expression, format: str | None = None) -> Expression:
    """Seconds since the epoch formatted as UTC wall-clock strings (large_string) with chrono's format
    language; default ``"%Y-%m-%d %H:%M:%S"``."""
    return timestamp_seconds(expr).dt.strftime("%Y-%m-%d %H:%M:%S" if format is None else format)


def make_date(year: Expression, month: Expression, day: Expression) -> Expression:
    """date32 from integer year, month (1-12) and day (1-31) columns; an impossible date
    (2023-02-29, month 13, day 0) or a null part gives null. Native ``spark_make_date``."""
    return Expression._call("spark_make_date", _expr(year), _expr(month), _expr(day))


def make_timestamp(
    year: Expression,
    month: Expression,
    day: Expression,
    hour: Expression,
    minute: Expression,
    second: Expression,
    timezone: str | None = None,
) -> Expression:
    """timestamp[us] from parts (``second`` may be fractional, kept to the microsecond); an impossible
    combination gives null. With ``timezone`` the result is timestamp[us, timezone] and the parts are
    that zone's wall clock. Native ``spark_make_timestamp``."""
    parts = [_expr(p) for p in (year, month, day, hour, minute, second)]
    if timezone is None:
        return Expression._call("spark_make_timestamp", *parts)
    return Expression._call("spark_make_timestamp", *parts).dt.replace_time_zone(timezone)


def make_timestamp_ltz(
    year: Expression,
    month: Expression,
    day: Expression,
    hour: Expression,
    minute: Expression,
    second: Expression,
    timezone: str | None = None,
) -> Expression:
    """timestamp[us, UTC] from parts read as ``timezone``'s wall clock (UTC when None); see
    :func:`make_timestamp`."""
    parts = [_expr(p) for p in (year, month, day, hour, minute, second)]
    naive = Expression._call("spark_make_timestamp", *parts)
    return naive.dt.replace_time_zone(timezone or "UTC").dt.convert_time_zone("UTC")


def last_day(expr: Expression) -> Expression:
    """The last day of ``expr``'s month (date32), from a date or timestamp."""
    days = _days(expr)
    first = _from_days(days - (_t.day(expr).cast(pa.int32()) - 1))
    return _from_days((first + interval(months=1)).cast(pa.int32()) - 1)


_WEEKDAYS = {
    "mo": 0,
    "mon": 0,
    "monday": 0,
    "tu": 1,
    "tue": 1,
    "tuesday": 1,
    "we": 2,
    "wed": 2,
    "wednesday": 2,
    "th": 3,
    "thu": 3,
    "thursday": 3,
    "fr": 4,
    "fri": 4,
    "friday": 4,
    "sa": 5,
    "sat": 5,
    "saturday": 5,
    "su": 6,
    "sun": 6,
    "sunday": 6,
}


def next_day(expr: Expression, day_of_week: str) -> Expression:
    """The first date strictly after ``expr``'s date that falls on ``day_of_week`` (date32). Spark's
    names, case-insensitive: ``"Monday"``, ``"Mon"``, ``"MO"``, ... Raises ValueError naming the value
    for any other string."""
    key = day_of_week.strip().lower() if isinstance(day_of_week, str) else None
    if key not in _WEEKDAYS:
        raise ValueError(
            f"next_day: invalid day_of_week {day_of_week!r}: expected a weekday name such as "
            "'Monday', 'Mon' or 'MO'"
        )
    target = _WEEKDAYS[key]
    dow = _t.day_of_week(expr).cast(pa.int32())  # Monday = 0
    return _from_days(_days(expr) + ((lit(target + 6) - dow) % 7 + 1))


def trunc(expr: Expression, interval: str, relative_to: Any = None) -> Expression:
    """:func:`date_trunc` with Spark's argument order; a bare unit (``"hour"``) means ``"1 hour"``."""
    normalized = interval
    stripped = interval.strip()
    if stripped and not stripped[0].isdigit():
        normalized = f"1 {stripped}"
    return _t.date_trunc(normalized, expr, relative_to)


def from_utc_timestamp(expr: Expression, timezone: str) -> Expression:
    """The wall clock in ``timezone`` (naive timestamp, the input's unit) of the UTC instant ``expr``
    (a naive timestamp read as UTC, or a zoned one's instant). Unknown zones raise KetchValueError."""
    zoned = _expr(expr).dt.convert_time_zone(timezone, from_timezone="UTC")
    return Expression._call("local_timestamp", zoned)


def to_utc_timestamp(expr: Expression, timezone: str) -> Expression:
    """The UTC instant (naive timestamp) of ``expr``'s wall clock read in ``timezone``. Like Daft (not
    Spark), a wall clock in a DST gap or overlap raises KetchValueError (a ValueError). Native
    ``spark_to_utc_timestamp``."""
    return Expression._call("spark_to_utc_timestamp", _expr(expr), timezone=timezone)


def current_date() -> Expression:
    """Today's date in UTC (date32), read from the system clock when the query runs (as Daft), not
    when the expression is built: every collect of the same DataFrame reads it again. Native
    ``current_date``: each morsel reads the clock once, the same value on all its rows."""
    return Expression._call("current_date")


def current_timestamp() -> Expression:
    """The current UTC time (naive timestamp[us]), read from the system clock when the query runs
    (as Daft), not when the expression is built. Native ``current_timestamp``: each morsel reads
    the clock once, the same value on all its rows (morsels of one query may differ by the time
    between them)."""
    return Expression._call("current_timestamp")


def current_timezone() -> Expression:
    """The session time zone as a string: always ``"UTC"`` (as in Daft)."""
    return lit("UTC")


__all__ = [
    "add_months",
    "current_date",
    "current_timestamp",
    "current_timezone",
    "date_add",
    "date_diff",
    "date_from_unix_date",
    "date_sub",
    "dateadd",
    "datediff",
    "datepart",
    "from_unixtime",
    "from_utc_timestamp",
    "last_day",
    "make_date",
    "make_timestamp",
    "make_timestamp_ltz",
    "months_between",
    "next_day",
    "timestamp_micros",
    "timestamp_millis",
    "timestamp_seconds",
    "to_utc_timestamp",
    "trunc",
]
