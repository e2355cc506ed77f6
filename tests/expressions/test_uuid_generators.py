"""uuid() (RFC 9562 versions 4 and 7) and extract_{minute,hour,day,month}_uuid7: version and
variant bits, uniqueness, v7 ordering and embedded time, extraction against Python arithmetic."""

from __future__ import annotations

import datetime
import time
import uuid as uuidlib

import numpy as np
import pyarrow as pa
import pytest

import ketch
from ketch import DataType, col
from ketch.functions import (
    extract_day_uuid7,
    extract_hour_uuid7,
    extract_minute_uuid7,
    extract_month_uuid7,
    uuid,
)

ROWS = 100_000


def _uuids(version: str) -> list[uuidlib.UUID]:
    df = ketch.from_pydict({"i": list(range(ROWS))}).into_partitions(3)
    out = df.select(uuid(version=version).alias("u"))
    assert out.schema()["u"].dtype == DataType.uuid()
    column = out.to_arrow().column("u")
    assert column.type == pa.uuid()
    return [uuidlib.UUID(bytes=b) for b in column.cast(pa.binary(16)).to_pylist()]


def test_uuid_v4_bits_and_uniqueness() -> None:
    values = _uuids("v4")
    assert len(values) == ROWS and len(set(values)) == ROWS
    assert all(u.version == 4 and u.variant == uuidlib.RFC_4122 for u in values)
    # 122 random bits: every hex digit outside the fixed ones takes all 16 values.
    assert len({u.hex[0] for u in values}) == 16 and len({u.hex[-1] for u in values}) == 16


def test_uuid_v7_bits_order_and_time() -> None:
    before = int(time.time() * 1000)
    df = ketch.from_pydict({"i": list(range(ROWS))})
    column = df.select(uuid(version="v7").alias("u")).to_arrow().column("u")
    after = int(time.time() * 1000)
    values = [uuidlib.UUID(bytes=b) for b in column.cast(pa.binary(16)).to_pylist()]
    assert len(set(values)) == ROWS
    assert all(u.version == 7 and u.variant == uuidlib.RFC_4122 for u in values)
    millis = [int.from_bytes(u.bytes[:6], "big") for u in values]
    assert before <= min(millis) and max(millis) <= after + 1
    # Strictly increasing within each batch (the default morsel holds them all or cuts them in order).
    batches = column.chunks
    for chunk in batches:
        raw = chunk.cast(pa.binary(16)).to_pylist()
        assert all(a < b for a, b in zip(raw, raw[1:], strict=False))


def test_two_calls_are_independent() -> None:
    out = ketch.from_pydict({"i": [1, 2, 3]}).select(uuid().alias("a"), uuid().alias("b")).to_pydict()
    assert set(out["a"]).isdisjoint(out["b"])


def test_bad_version() -> None:
    with pytest.raises(ValueError, match="v4"):
        uuid(version="v1")  # type: ignore[arg-type]


def _v7(ms: int) -> bytes:
    return ms.to_bytes(6, "big") + bytes([0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, 0])


@pytest.mark.parametrize("storage", [pa.uuid(), pa.binary(16)])
def test_extract_uuid7(storage: pa.DataType) -> None:
    ms = [0, 1, 59_999, 60_000, 1_700_000_000_123, 2**48 - 1, 951_782_400_000]
    df = ketch.from_arrow(pa.table({"u": pa.array([_v7(m) for m in ms] + [None], storage)}))
    out = df.select(
        extract_minute_uuid7(col("u")).alias("mi"),
        extract_hour_uuid7(col("u")).alias("h"),
        extract_day_uuid7(col("u")).alias("d"),
        extract_month_uuid7(col("u")).alias("mo"),
    )
    assert all(f.type == pa.int64() for f in out.to_arrow().schema)

    def month(m: int) -> int:  # numpy's calendar reaches past Python's year 9999
        return int(np.datetime64(m, "ms").astype("datetime64[M]").astype(np.int64))

    assert out.to_pydict() == {
        "mi": [m // 60_000 for m in ms] + [None],
        "h": [m // 3_600_000 for m in ms] + [None],
        "d": [m // 86_400_000 for m in ms] + [None],
        "mo": [month(m) for m in ms] + [None],
    }


def test_extract_of_generated_v7_is_now() -> None:
    now = datetime.datetime.now(datetime.timezone.utc)
    out = (
        ketch.from_pydict({"i": [1]}).select(extract_minute_uuid7(uuid(version="v7")).alias("m")).to_pydict()
    )
    assert abs(out["m"][0] - int(now.timestamp()) // 60) <= 1


@pytest.mark.parametrize("column", ["s", "b4"])
def test_extract_bad_type(column: str) -> None:
    df = ketch.from_arrow(pa.table({"s": ["a"], "b4": pa.array([b"abcd"], pa.binary(4))}))
    with pytest.raises(Exception, match="extract_day_uuid7") as info:
        df.select(extract_day_uuid7(col(column)))
    assert "fixed_size_binary(16)" in str(info.value)
