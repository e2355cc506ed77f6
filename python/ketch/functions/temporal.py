"""Daft's temporal free functions (``from ketch.functions import year, strftime, ...``): each is the
``Expression.dt`` method of the same name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ketch.expressions.expression import Expression, _expr
from ketch.expressions.temporal import interval

if TYPE_CHECKING:
    from ketch.datatype import TimeUnit


def date(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.date`."""
    return _expr(expr).dt.date()


def time(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.time`."""
    return _expr(expr).dt.time()


def year(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.year`."""
    return _expr(expr).dt.year()


def quarter(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.quarter`."""
    return _expr(expr).dt.quarter()


def month(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.month`."""
    return _expr(expr).dt.month()


def day(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.day`."""
    return _expr(expr).dt.day()


def day_of_month(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.day_of_month`."""
    return _expr(expr).dt.day_of_month()


dayofmonth = day_of_month


def day_of_week(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.day_of_week`."""
    return _expr(expr).dt.day_of_week()


def day_of_year(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.day_of_year`."""
    return _expr(expr).dt.day_of_year()


dayofyear = day_of_year


def week_of_year(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.week_of_year`."""
    return _expr(expr).dt.week_of_year()


weekofyear = week_of_year


def hour(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.hour`."""
    return _expr(expr).dt.hour()


def minute(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.minute`."""
    return _expr(expr).dt.minute()


def second(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.second`."""
    return _expr(expr).dt.second()


def millisecond(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.millisecond`."""
    return _expr(expr).dt.millisecond()


def microsecond(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.microsecond`."""
    return _expr(expr).dt.microsecond()


def nanosecond(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.nanosecond`."""
    return _expr(expr).dt.nanosecond()


def unix_date(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.unix_date`."""
    return _expr(expr).dt.unix_date()


def strftime(expr: Expression, format: str | None = None) -> Expression:
    """See :meth:`DatetimeNamespace.strftime`."""
    return _expr(expr).dt.strftime(format)


def date_format(expr: Expression, format: str | None = None) -> Expression:
    """Same as :func:`strftime`."""
    return strftime(expr, format)


def to_unix_epoch(expr: Expression, time_unit: str | TimeUnit | None = None) -> Expression:
    """See :meth:`DatetimeNamespace.to_unix_epoch`."""
    return _expr(expr).dt.to_unix_epoch(time_unit)


def date_trunc(interval: str, expr: Expression, relative_to: Any = None) -> Expression:
    """See :meth:`DatetimeNamespace.truncate` (Daft's argument order: interval first)."""
    return _expr(expr).dt.truncate(interval, relative_to)


def convert_time_zone(expr: Expression, to_timezone: str, from_timezone: str | None = None) -> Expression:
    """See :meth:`DatetimeNamespace.convert_time_zone`."""
    return _expr(expr).dt.convert_time_zone(to_timezone, from_timezone)


def convert_timezone(target_timezone: str, source_timestamp: Expression) -> Expression:
    """Spark-style alias of :func:`convert_time_zone`, in Spark's (and Daft's) argument order:
    ``(target_timezone, source_timestamp)``; the timestamp must already carry a time zone."""
    return convert_time_zone(source_timestamp, target_timezone)


def replace_time_zone(expr: Expression, timezone: str | None = None) -> Expression:
    """See :meth:`DatetimeNamespace.replace_time_zone`."""
    return _expr(expr).dt.replace_time_zone(timezone)


def total_seconds(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.total_seconds`."""
    return _expr(expr).dt.total_seconds()


def total_milliseconds(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.total_milliseconds`."""
    return _expr(expr).dt.total_milliseconds()


def total_microseconds(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.total_microseconds`."""
    return _expr(expr).dt.total_microseconds()


def total_nanoseconds(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.total_nanoseconds`."""
    return _expr(expr).dt.total_nanoseconds()


def total_minutes(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.total_minutes`."""
    return _expr(expr).dt.total_minutes()


def total_hours(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.total_hours`."""
    return _expr(expr).dt.total_hours()


def total_days(expr: Expression) -> Expression:
    """See :meth:`DatetimeNamespace.total_days`."""
    return _expr(expr).dt.total_days()


__all__ = [
    "convert_time_zone",
    "convert_timezone",
    "date",
    "date_format",
    "date_trunc",
    "day",
    "day_of_month",
    "day_of_week",
    "day_of_year",
    "dayofmonth",
    "dayofyear",
    "hour",
    "interval",
    "microsecond",
    "millisecond",
    "minute",
    "month",
    "nanosecond",
    "quarter",
    "replace_time_zone",
    "second",
    "strftime",
    "time",
    "to_unix_epoch",
    "total_days",
    "total_hours",
    "total_microseconds",
    "total_milliseconds",
    "total_minutes",
    "total_nanoseconds",
    "total_seconds",
    "unix_date",
    "week_of_year",
    "weekofyear",
    "year",
]
