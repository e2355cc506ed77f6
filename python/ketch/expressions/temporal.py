"""``Expression.dt``: date, time and duration kernels (Daft's names). Every method builds one native
call; the ``ketch.functions`` free functions of the same names are this namespace's methods."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from ketch.datatype import TimeUnit
    from ketch.expressions.expression import Expression

_NANOS_PER = {
    "nanosecond": 1,
    "microsecond": 1_000,
    "millisecond": 1_000_000,
    "second": 1_000_000_000,
    "minute": 60_000_000_000,
    "hour": 3_600_000_000_000,
    "day": 86_400_000_000_000,
    "week": 7 * 86_400_000_000_000,
}
_INTERVAL = re.compile(r"^\s*(\d+)\s+([a-z]+?)s?\s*$")


def interval_nanoseconds(interval: str) -> int:
    """Nanoseconds in a truncation interval ``"{integer} {unit}"`` (units microsecond ... week, plural
    allowed). Raises ValueError naming the interval when it does not parse or is not positive."""
    match = _INTERVAL.match(interval) if isinstance(interval, str) else None
    if match is None or match.group(2) not in _NANOS_PER or int(match.group(1)) <= 0:
        raise ValueError(
            f"invalid interval {interval!r}: expected '{{positive integer}} {{unit}}' with unit one of "
            "microsecond, millisecond, second, minute, hour, day, week"
        )
    return int(match.group(1)) * _NANOS_PER[match.group(2)]


def time_unit_name(unit: str | TimeUnit | None, default: str = "s") -> str:
    """'s', 'ms', 'us' or 'ns' from a TimeUnit, one of those strings, or None (``default``)."""
    if unit is None:
        return default
    name = str(getattr(unit, "_unit", unit))
    aliases = {"seconds": "s", "milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns"}
    name = aliases.get(name, name)
    if name not in ("s", "ms", "us", "ns"):
        raise ValueError(f"unknown time unit {unit!r}: one of 's', 'ms', 'us', 'ns'")
    return name


def is_interval(value: Any) -> bool:
    """True for an interval operand of ``+`` / ``-``: ``ketch.interval(...)``, a
    ``pyarrow.MonthDayNano`` or a pyarrow interval scalar."""
    if isinstance(value, pa.MonthDayNano):
        return True
    if isinstance(value, pa.Scalar):
        return value.type == pa.month_day_nano_interval()
    return bool(getattr(value, "_interval_literal", False))


def interval(
    years: int | None = None,
    months: int | None = None,
    days: int | None = None,
    hours: int | None = None,
    minutes: int | None = None,
    seconds: int | None = None,
    millis: int | None = None,
    nanos: int | None = None,
) -> Expression:
    """A calendar interval literal (month_day_nano_interval) for date arithmetic:
    ``col("date") + interval(months=1)`` moves the calendar (Jan 31 + 1 month = Feb 28/29, the day
    clamped to the month's length), then adds days, then the time parts. Works on dates and
    timestamps (zoned ones on their local wall clock)."""
    from ketch.expressions.expression import lit

    total_months = (years or 0) * 12 + (months or 0)
    total_nanos = (
        (hours or 0) * 3_600_000_000_000
        + (minutes or 0) * 60_000_000_000
        + (seconds or 0) * 1_000_000_000
        + (millis or 0) * 1_000_000
        + (nanos or 0)
    )
    value = pa.scalar(pa.MonthDayNano([total_months, days or 0, total_nanos]), pa.month_day_nano_interval())
    expr = lit(value)
    expr._interval_literal = True  # type: ignore[attr-defined]
    return expr


class DatetimeNamespace:
    """Kernels over timestamp, date, time and duration columns. Field extractors read the local
    wall clock of zoned timestamps; a wrong input type raises KetchTypeError at plan time naming
    the function, the expression and its type."""

    def __init__(self, expr: Expression) -> None:
        self._expr = expr

    def _field(self, arrow_function: str, dtype: pa.DataType) -> Expression:
        from ketch.expressions.expression import Expression

        return Expression._call(arrow_function, self._expr).cast(dtype)

    # -- calendar fields ----------------------------------------------------------------------------
    def date(self) -> Expression:
        """The calendar date (date32) of a timestamp (its local date when zoned) or date."""
        from ketch.expressions.expression import Expression

        return Expression._call("dt_date", self._expr)

    def time(self) -> Expression:
        """The time of day of a timestamp: time32[s|ms] / time64[us|ns], the column's unit."""
        from ketch.expressions.expression import Expression

        return Expression._call("dt_time", self._expr)

    def year(self) -> Expression:
        """The year (int32)."""
        return self._field("year", pa.int32())

    def quarter(self) -> Expression:
        """The quarter, 1-4 (uint32)."""
        return self._field("quarter", pa.uint32())

    def month(self) -> Expression:
        """The month, 1-12 (uint32)."""
        return self._field("month", pa.uint32())

    def day(self) -> Expression:
        """The day of the month, 1-31 (uint32)."""
        return self._field("day", pa.uint32())

    def day_of_month(self) -> Expression:
        """Same as :meth:`day`."""
        return self.day()

    def day_of_week(self) -> Expression:
        """The weekday, 0 for Monday to 6 for Sunday (uint32)."""
        return self._field("day_of_week", pa.uint32())

    def day_of_year(self) -> Expression:
        """The ordinal day, 1 for January 1st to 365/366 (uint32)."""
        return self._field("day_of_year", pa.uint32())

    def week_of_year(self) -> Expression:
        """The ISO 8601 week number, 1-53 (uint32)."""
        return self._field("iso_week", pa.uint32())

    def hour(self) -> Expression:
        """The hour, 0-23 (uint32)."""
        return self._field("hour", pa.uint32())

    def minute(self) -> Expression:
        """The minute, 0-59 (uint32)."""
        return self._field("minute", pa.uint32())

    def second(self) -> Expression:
        """The second, 0-59 (uint32)."""
        return self._field("second", pa.uint32())

    def millisecond(self) -> Expression:
        """The sub-second part in whole milliseconds, 0-999 (uint32)."""
        return self._field("millisecond", pa.uint32())

    def microsecond(self) -> Expression:
        """The sub-second part in whole microseconds, 0-999999 (uint32), as Daft."""
        from ketch.expressions.expression import Expression

        ms = Expression._call("millisecond", self._expr)
        us = Expression._call("microsecond", self._expr)
        return (ms * 1_000 + us).cast(pa.uint32())

    def nanosecond(self) -> Expression:
        """The sub-second part in nanoseconds, 0-999999999 (uint32), as Daft."""
        from ketch.expressions.expression import Expression

        ms = Expression._call("millisecond", self._expr)
        us = Expression._call("microsecond", self._expr)
        ns = Expression._call("nanosecond", self._expr)
        return ((ms * 1_000 + us) * 1_000 + ns).cast(pa.uint32())

    def unix_date(self) -> Expression:
        """Days since 1970-01-01 (uint64; a date before 1970 is a cast error)."""
        return self.date().cast(pa.int32()).cast(pa.uint64())

    # -- conversions ----------------------------------------------------------------------------------
    def strftime(self, format: str | None = None) -> Expression:
        """Formats timestamps and dates as strings (large_string) with chrono's format language
        (``%Y-%m-%d``, ``%H:%M:%S``, ``%S%.3f`` ...). Without ``format``: ISO 8601
        (``2023-01-01`` for dates, ``2023-01-01T12:01:00.000000`` for timestamp[us]). An unsupported
        specifier raises KetchValueError at plan time naming the pattern."""
        from ketch.expressions.expression import Expression

        if format is None:
            return Expression._call("dt_strftime", self._expr)
        if not isinstance(format, str):
            raise TypeError(f"strftime format must be a str, got {type(format).__name__}")
        return Expression._call("dt_strftime", self._expr, format=format)

    def to_unix_epoch(self, time_unit: str | TimeUnit | None = None) -> Expression:
        """Time since 1970-01-01 00:00 UTC in ``time_unit`` (default seconds) as int64, floored."""
        from ketch.expressions.expression import Expression

        return Expression._call("dt_to_unix_epoch", self._expr, unit=time_unit_name(time_unit))

    def truncate(self, interval: str, relative_to: Any = None) -> Expression:
        """Floors timestamps to multiples of ``interval`` ("{integer} {unit}", units microsecond
        through week) counted from ``relative_to`` (a timestamp column or literal; default the Unix
        epoch). Zoned timestamps are truncated on their local wall clock. Raises ValueError for an
        interval that does not parse; KetchValueError when it is finer than the column's unit."""
        from ketch.expressions.expression import Expression, lit

        step = interval_nanoseconds(interval)
        args = [self._expr] if relative_to is None else [self._expr, relative_to]
        if relative_to is not None and not isinstance(relative_to, Expression):
            args[1] = lit(relative_to)
        return Expression._call("dt_truncate", *args, step_ns=step, interval=interval)

    def convert_time_zone(self, to_timezone: str, from_timezone: str | None = None) -> Expression:
        """The same instants shown in ``to_timezone`` (timestamp[unit, to_timezone]). Naive input
        needs ``from_timezone``. Unknown zones raise KetchValueError at plan time naming the zone."""
        from ketch.expressions.expression import Expression

        options: dict[str, Any] = {"to_timezone": to_timezone}
        if from_timezone is not None:
            options["from_timezone"] = from_timezone
        return Expression._call("dt_convert_time_zone", self._expr, **options)

    def replace_time_zone(self, timezone: str | None = None) -> Expression:
        """The same wall-clock time in ``timezone`` (naive when None). A local time that occurs
        twice (clocks falling back) takes its first instant; one that does not exist (clocks
        springing forward) moves to the end of the gap (02:30 -> 03:00 in New York)."""
        from ketch.expressions.expression import Expression

        if timezone is None:
            return Expression._call("dt_replace_time_zone", self._expr)
        return Expression._call("dt_replace_time_zone", self._expr, timezone=timezone)

    # -- durations --------------------------------------------------------------------------------------
    def _total(self, unit: str) -> Expression:
        from ketch.expressions.expression import Expression

        return Expression._call("dt_total", self._expr, unit=unit)

    def total_seconds(self) -> Expression:
        """Whole seconds in a duration (int64, truncated toward zero)."""
        return self._total("s")

    def total_milliseconds(self) -> Expression:
        """Whole milliseconds in a duration (int64)."""
        return self._total("ms")

    def total_microseconds(self) -> Expression:
        """Whole microseconds in a duration (int64)."""
        return self._total("us")

    def total_nanoseconds(self) -> Expression:
        """Nanoseconds in a duration (int64)."""
        return self._total("ns")

    def total_minutes(self) -> Expression:
        """Whole minutes in a duration (int64)."""
        return self._total("min")

    def total_hours(self) -> Expression:
        """Whole hours in a duration (int64)."""
        return self._total("h")

    def total_days(self) -> Expression:
        """Whole days in a duration (int64)."""
        return self._total("d")
