"""Daft's partition transforms (partition_days/hours/months/years, partition_iceberg_bucket,
partition_iceberg_truncate): values against Python computations of the Iceberg spec's transforms
(a pure-Python murmur3_x86_32 below) and the spec's published hash vectors."""

from __future__ import annotations

import datetime
import decimal
import struct
import uuid as uuidlib

import pyarrow as pa
import pytest

import ketch
from ketch import col
from ketch.functions import (
    partition_days,
    partition_hours,
    partition_iceberg_bucket,
    partition_iceberg_truncate,
    partition_months,
    partition_years,
)

EPOCH = datetime.datetime(1970, 1, 1)
INT_MAX = 0x7FFFFFFF


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3_x86_32 (Austin Appleby's reference), as a signed 32-bit int like Java's."""
    c1, c2, mask = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    h = seed & mask
    n = len(data) // 4
    for i in range(n):
        k = int.from_bytes(data[4 * i : 4 * i + 4], "little")
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        k = (k * c2) & mask
        h ^= k
        h = ((h << 13) | (h >> 19)) & mask
        h = (h * 5 + 0xE6546B64) & mask
    tail = data[4 * n :]
    k = 0
    for i, b in enumerate(tail):
        k |= b << (8 * i)
    if tail:
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        k = (k * c2) & mask
        h ^= k
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def hash_long(v: int) -> int:
    return murmur3_32(struct.pack("<q", v))


def hash_decimal(unscaled: int) -> int:
    length = max(1, (unscaled.bit_length() + 8) // 8)  # minimal two's complement bytes
    return murmur3_32(unscaled.to_bytes(length, "big", signed=True))


def bucket(h: int, n: int) -> int:
    return (h & INT_MAX) % n


def one(df: ketch.DataFrame, expr: ketch.Expression) -> list:
    return df.select(expr.alias("x")).to_pydict()["x"]


# -- the Iceberg spec's hash vectors (appendix B) ---------------------------------------------------
SPEC_VECTORS = [
    (pa.array([34], pa.int32()), 2017239379),
    (pa.array([34], pa.int64()), 2017239379),
    (pa.array([decimal.Decimal("14.20")], pa.decimal128(9, 2)), -500754589),
    (pa.array([datetime.date(2017, 11, 16)]), -653330422),
    (pa.array([datetime.time(22, 31, 8)], pa.time64("us")), -662762989),
    (pa.array([datetime.datetime(2017, 11, 16, 22, 31, 8)], pa.timestamp("us")), -2047944441),
    (pa.array([datetime.datetime(2017, 11, 16, 22, 31, 8)], pa.timestamp("us", tz="UTC")), -2047944441),
    (pa.array(["iceberg"]), 1210000089),
    (pa.array([uuidlib.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7").bytes], pa.uuid()), 1488055340),
    (pa.array([b"\x00\x01\x02\x03"], pa.binary(4)), -188683207),
    (pa.array([b"\x00\x01\x02\x03"]), -188683207),
]


def test_reference_murmur_matches_the_spec() -> None:
    assert hash_long(34) == 2017239379
    assert murmur3_32(b"iceberg") == 1210000089
    assert hash_decimal(1420) == -500754589


@pytest.mark.parametrize(("array", "expected_hash"), SPEC_VECTORS, ids=lambda v: str(getattr(v, "type", v)))
def test_bucket_spec_vectors(array: pa.Array, expected_hash: int) -> None:
    df = ketch.from_arrow(pa.table({"v": array}))
    for n in (1, 7, 100, INT_MAX):
        assert one(df, partition_iceberg_bucket(col("v"), n)) == [bucket(expected_hash, n)]
    assert (
        df.select(partition_iceberg_bucket(col("v"), 16)).schema().to_pyarrow_schema().field(0).type
        == pa.int32()
    )


def test_bucket_values_against_python(rng) -> None:
    ints = [int(x) for x in rng.integers(-(2**62), 2**62, 200)] + [0, -1, 2**63 - 1, -(2**63), None]
    small = [int(x) for x in rng.integers(-128, 128, 50)] + [None]
    strings = ["", "a", "héllo wörld", "日本語テキスト", None] + [str(x) for x in rng.integers(0, 10**9, 50)]
    decimals = [decimal.Decimal(int(x)).scaleb(-3) for x in rng.integers(-(10**15), 10**15, 50)]
    decimals += [decimal.Decimal("0.000"), decimal.Decimal("-0.001"), decimal.Decimal("0.128"), None]
    days = [int(x) for x in rng.integers(-100_000, 100_000, 50)] + [None]
    ns = [int(x) for x in rng.integers(-(2**62), 2**62, 50)] + [-1, None]
    n = 1000
    df = ketch.from_arrow(pa.table({"i": pa.array(ints, pa.int64())}))
    assert one(df, partition_iceberg_bucket(col("i"), n)) == [
        None if v is None else bucket(hash_long(v), n) for v in ints
    ]
    df = ketch.from_arrow(pa.table({"i": pa.array(small, pa.int8())}))
    assert one(df, partition_iceberg_bucket(col("i"), n)) == [
        None if v is None else bucket(hash_long(v), n) for v in small
    ]
    for t in (pa.string(), pa.large_string()):
        df = ketch.from_arrow(pa.table({"s": pa.array(strings, t)}))
        expected = [None if s is None else bucket(murmur3_32(s.encode()), n) for s in strings]
        assert one(df, partition_iceberg_bucket(col("s"), n)) == expected
    df = ketch.from_arrow(pa.table({"d": pa.array(decimals, pa.decimal128(18, 3))}))
    expected = [None if d is None else bucket(hash_decimal(int(d.scaleb(3))), n) for d in decimals]
    assert one(df, partition_iceberg_bucket(col("d"), n)) == expected
    df = ketch.from_arrow(pa.table({"d": pa.array(days, pa.int32()).cast(pa.date32())}))
    assert one(df, partition_iceberg_bucket(col("d"), n)) == [
        None if v is None else bucket(hash_long(v), n) for v in days
    ]
    # Nanosecond timestamps hash as their microseconds, floored (as Daft).
    df = ketch.from_arrow(pa.table({"t": pa.array(ns, pa.timestamp("ns"))}))
    expected = [None if v is None else bucket(hash_long(v // 1000), n) for v in ns]
    assert one(df, partition_iceberg_bucket(col("t"), n)) == expected


def test_truncate_values_against_python(rng) -> None:
    ints = [int(x) for x in rng.integers(-(10**12), 10**12, 100)] + [0, -1, 1, 9, 10, -10, -11, None]
    for w in (1, 3, 10, 1000):
        df = ketch.from_arrow(pa.table({"i": pa.array(ints, pa.int64())}))
        assert one(df, partition_iceberg_truncate(col("i"), w)) == [
            None if v is None else v - (v % w) for v in ints
        ]
    df = ketch.from_arrow(pa.table({"i": pa.array([1, 2, 3, 200, None], pa.uint8())}))
    out = df.select(partition_iceberg_truncate(col("i"), 3).alias("x"))
    assert out.to_pydict()["x"] == [0, 0, 3, 198, None]
    assert out.to_arrow().column("x").type == pa.uint8()
    # Decimals: the unscaled value (the spec's example: 10.65 truncate[50] is 10.50).
    values = [decimal.Decimal("10.65"), decimal.Decimal("-0.01"), decimal.Decimal("14.20"), None]
    df = ketch.from_arrow(pa.table({"d": pa.array(values, pa.decimal128(9, 2))}))
    expected = [
        None if d is None else decimal.Decimal(int(d.scaleb(2)) - int(d.scaleb(2)) % 50).scaleb(-2)
        for d in values
    ]
    assert one(df, partition_iceberg_truncate(col("d"), 50)) == expected
    assert expected[0] == decimal.Decimal("10.50")
    # Strings: the first w code points; binaries: the first w bytes.
    strings = ["iceberg", "", "héllo wörld", "日本語テキスト", "ab", None]
    for t in (pa.string(), pa.large_string()):
        df = ketch.from_arrow(pa.table({"s": pa.array(strings, t)}))
        assert one(df, partition_iceberg_truncate(col("s"), 3)) == [
            None if s is None else s[:3] for s in strings
        ]
    blobs = [b"\x00\x01\x02\x03", b"", b"abcdefgh", None]
    df = ketch.from_arrow(pa.table({"b": pa.array(blobs)}))
    assert one(df, partition_iceberg_truncate(col("b"), 3)) == [None if b is None else b[:3] for b in blobs]


def _days(d: datetime.date) -> int:
    return (d - EPOCH.date()).days


def test_temporal_transforms_on_dates() -> None:
    dates = [
        datetime.date(1969, 12, 31),
        datetime.date(1970, 1, 1),
        datetime.date(1969, 1, 1),
        datetime.date(1968, 12, 31),
        datetime.date(2024, 2, 29),
        datetime.date(1, 1, 1),
        None,
    ]
    df = ketch.from_pydict({"d": dates})
    out = df.select(
        partition_days(col("d")).alias("days"),
        partition_months(col("d")).alias("m"),
        partition_years(col("d")).alias("y"),
    )
    assert out.to_pydict() == {
        "days": dates,
        "m": [None if d is None else (d.year - 1970) * 12 + d.month - 1 for d in dates],
        "y": [None if d is None else d.year - 1970 for d in dates],
    }
    types = out.to_arrow().schema
    assert [types.field(n).type for n in ("days", "m", "y")] == [pa.date32(), pa.int32(), pa.int32()]


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
@pytest.mark.parametrize("tz", [None, "America/New_York"])
def test_temporal_transforms_on_timestamps(unit: str, tz: str | None, rng) -> None:
    per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
    ticks = [int(x) * per_second // 1000 for x in rng.integers(-(2**40), 2**40, 100)]
    ticks += [-1, 0, 1, -3600 * per_second - 1, None]
    df = ketch.from_arrow(pa.table({"t": pa.array(ticks, pa.timestamp(unit, tz=tz))}))
    out = df.select(
        partition_days(col("t")).alias("days"),
        partition_hours(col("t")).alias("h"),
        partition_months(col("t")).alias("m"),
        partition_years(col("t")).alias("y"),
    ).to_pydict()

    def civil(t: int) -> datetime.date:
        return EPOCH.date() + datetime.timedelta(days=t // (86400 * per_second))

    assert out["days"] == [None if t is None else civil(t) for t in ticks]
    assert out["h"] == [None if t is None else t // (3600 * per_second) for t in ticks]
    assert out["m"] == [
        None if t is None else (civil(t).year - 1970) * 12 + civil(t).month - 1 for t in ticks
    ]
    assert out["y"] == [None if t is None else civil(t).year - 1970 for t in ticks]
    # Before 1970 the transforms floor: one tick before the epoch is day -1, hour -1, month -1.
    i = ticks.index(-1)
    assert (out["days"][i], out["h"][i], out["m"][i], out["y"][i]) == (
        datetime.date(1969, 12, 31),
        -1,
        -1,
        -1,
    )


def test_expression_methods_and_namespace() -> None:
    df = ketch.from_arrow(
        pa.table({"t": pa.array([-1, 3_600_000_000 * 25], pa.timestamp("us")), "s": ["iceberg", "ab"]})
    )
    out = df.select(
        col("t").partition_days().alias("a"),
        col("t").partitioning.days().alias("b"),
        col("t").partition_hours().alias("c"),
        col("t").partitioning.hours().alias("d"),
        col("t").partition_months().alias("e"),
        col("t").partitioning.years().alias("f"),
        col("s").partition_iceberg_bucket(100).alias("g"),
        col("s").partitioning.iceberg_bucket(100).alias("h"),
        col("s").partition_iceberg_truncate(3).alias("i"),
        col("s").partitioning.iceberg_truncate(3).alias("j"),
    ).to_pydict()
    assert out["a"] == out["b"] == [datetime.date(1969, 12, 31), datetime.date(1970, 1, 2)]
    assert out["c"] == out["d"] == [-1, 25]
    assert out["e"] == [-1, 0] and out["f"] == [-1, 0]
    assert out["g"] == out["h"] == [bucket(1210000089, 100), bucket(murmur3_32(b"ab"), 100)]
    assert out["i"] == out["j"] == ["ice", "ab"]


@pytest.mark.parametrize(
    ("make", "column", "fragment"),
    [
        (lambda e: partition_days(e), "s", "partition_days"),
        (lambda e: partition_hours(e), "d", "partition_hours"),
        (lambda e: partition_months(e), "f", "partition_months"),
        (lambda e: partition_years(e), "s", "partition_years"),
        (lambda e: partition_iceberg_bucket(e, 4), "f", "partition_iceberg_bucket"),
        (lambda e: partition_iceberg_bucket(e, 4), "b", "partition_iceberg_bucket"),
        (lambda e: partition_iceberg_truncate(e, 4), "d", "partition_iceberg_truncate"),
        (lambda e: partition_iceberg_truncate(e, 4), "f", "partition_iceberg_truncate"),
    ],
)
def test_bad_types_fail_at_plan_time(make, column: str, fragment: str) -> None:
    df = ketch.from_pydict({"s": ["a"], "d": [datetime.date(2020, 1, 1)], "f": [1.5], "b": [True]})
    with pytest.raises(Exception, match=fragment) as info:
        df.select(make(col(column)))  # planning alone, no collect
    assert str(df.schema()[column].dtype).lower().split("[")[0][:4] in str(
        info.value
    ).lower() or column in str(info.value)


@pytest.mark.parametrize("bad", [0, -3, 2**31, 1.5, True])
def test_bad_widths(bad) -> None:
    with pytest.raises(ValueError, match="partition_iceberg_bucket"):
        partition_iceberg_bucket(col("x"), bad)
    with pytest.raises(ValueError, match="partition_iceberg_truncate"):
        partition_iceberg_truncate(col("x"), bad)
