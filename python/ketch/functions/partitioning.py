"""Daft's partition transforms and the uuid generator (``daft.functions.partition`` and
``uuid`` of ``daft.functions.misc``), natively computed
(``cpp/ketch/functions/partitioning/``)."""

from __future__ import annotations

from typing import Literal

from ketch.expressions.expression import Expression, _expr

__all__ = [
    "extract_day_uuid7",
    "extract_hour_uuid7",
    "extract_minute_uuid7",
    "extract_month_uuid7",
    "partition_days",
    "partition_hours",
    "partition_iceberg_bucket",
    "partition_iceberg_truncate",
    "partition_months",
    "partition_years",
    "uuid",
]


def partition_days(expr: Expression) -> Expression:
    """Date: the UTC day of a date or timestamp (any unit, any time zone), Iceberg's ``day``
    transform. Raises TypeError (at plan time) for other types."""
    return Expression._call("partition_days", _expr(expr))


def partition_hours(expr: Expression) -> Expression:
    """Int32: hours since 1970-01-01T00:00 UTC of a timestamp, floored (Iceberg's ``hour``
    transform; -1 µs is hour -1). Raises TypeError for dates and other types."""
    return Expression._call("partition_hours", _expr(expr))


def partition_months(expr: Expression) -> Expression:
    """Int32: ``(year - 1970) * 12 + month - 1`` of a date or timestamp (Iceberg's ``month``)."""
    return Expression._call("partition_months", _expr(expr))


def partition_years(expr: Expression) -> Expression:
    """Int32: ``year - 1970`` of a date or timestamp (Iceberg's ``year``)."""
    return Expression._call("partition_years", _expr(expr))


def _positive_int(function: str, name: str, value: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < 2**31:
        raise ValueError(f"{function}: {name} must be an int between 1 and 2**31 - 1, got {value!r}")
    return value


def partition_iceberg_bucket(expr: Expression, n: int) -> Expression:
    """Int32: the Iceberg bucket ``(murmur3_x86_32(bytes, seed 0) & 0x7FFFFFFF) % n`` with the
    bytes of the Iceberg spec's appendix B (integers, dates, times and timestamps as 8-byte
    little-endian longs of days / microseconds; strings as UTF-8; binaries as is; decimal128 as the
    minimal big-endian two's complement unscaled value; uuids as their 16 bytes). Nulls stay null.
    Raises ValueError for ``n`` outside [1, 2**31 - 1], TypeError for other input types.
    See https://iceberg.apache.org/spec/#appendix-b-32-bit-hash-requirements."""
    n = _positive_int("partition_iceberg_bucket", "n", n)
    return Expression._call("partition_iceberg_bucket", _expr(expr), n=n)


def partition_iceberg_truncate(expr: Expression, w: int) -> Expression:
    """The input's type: Iceberg's ``truncate[w]``: integers and decimal128 (unscaled) to
    ``v - (((v % w) + w) % w)``, strings to their first ``w`` code points, binaries to their first
    ``w`` bytes. Raises ValueError for ``w`` outside [1, 2**31 - 1], TypeError for other types.
    See https://iceberg.apache.org/spec/#truncate-transform-details."""
    w = _positive_int("partition_iceberg_truncate", "w", w)
    return Expression._call("partition_iceberg_truncate", _expr(expr), w=w)


def extract_minute_uuid7(expr: Expression) -> Expression:
    """Int64: minutes since 1970-01-01 of the 48-bit Unix-millisecond time of a UUIDv7 (a UUID or
    a fixed_size_binary(16)). Raises TypeError for other types."""
    return Expression._call("extract_minute_uuid7", _expr(expr))


def extract_hour_uuid7(expr: Expression) -> Expression:
    """Int64: hours since 1970-01-01 of a UUIDv7's time (see :func:`extract_minute_uuid7`)."""
    return Expression._call("extract_hour_uuid7", _expr(expr))


def extract_day_uuid7(expr: Expression) -> Expression:
    """Int64: days since 1970-01-01 of a UUIDv7's time (see :func:`extract_minute_uuid7`)."""
    return Expression._call("extract_day_uuid7", _expr(expr))


def extract_month_uuid7(expr: Expression) -> Expression:
    """Int64: ``(year - 1970) * 12 + month - 1`` of a UUIDv7's time, as :func:`partition_months`."""
    return Expression._call("extract_month_uuid7", _expr(expr))


def uuid(version: Literal["v4", "v7"] = "v4") -> Expression:
    """UUID: a fresh RFC 9562 UUID per row. ``"v4"``: 122 random bits from the OS's CSPRNG;
    ``"v7"``: the 48-bit Unix time in ms, then 74 bits that start random and grow by a random step
    per row, so the values of one batch are strictly increasing. Two calls give independent values.
    Raises ValueError for another version."""
    if version == "v4":
        return Expression._call("uuid")
    if version == "v7":
        return Expression._call("uuidv7")
    raise ValueError("`version` must be 'v4' or 'v7'")
