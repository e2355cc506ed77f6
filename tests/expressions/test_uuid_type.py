"""DataType.uuid(): Arrow's canonical ``arrow.uuid`` extension type (as Daft), inferred from Python
``uuid.UUID`` values, given back as ``uuid.UUID`` objects, compared by value and cast to and from
text and bytes. Expected values come from Python's ``uuid`` module."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ketch
from ketch import DataType, col, lit
from ketch.errors import KetchError

VALUES = [
    uuid.UUID("2d3b2f0e-6c5e-4f0e-9a7d-1b2c3d4e5f60"),
    None,
    uuid.UUID(int=5),
    uuid.UUID(int=2**128 - 1),
]


def test_constructor_inference_and_values():
    assert DataType.uuid() == pa.uuid()
    assert DataType.uuid().is_uuid() and not DataType.string().is_uuid()
    assert repr(DataType.uuid()) == "UUID"
    assert DataType._infer(uuid.UUID) == DataType.uuid()
    df = ketch.from_pydict({"u": VALUES})
    assert df.schema()["u"].dtype == DataType.uuid()
    assert df.to_pydict() == {"u": VALUES}
    assert df.to_arrow().column("u").type == pa.uuid()
    # a column mixing UUIDs and other objects stays a Python column
    mixed = ketch.from_pydict({"m": [uuid.UUID(int=1), "x"]})
    assert mixed.schema()["m"].dtype == DataType.python()


def test_uuid_literals_compare_by_value():
    df = ketch.from_pydict({"u": VALUES, "k": [1, 2, 3, 4]})
    assert df.where(col("u") == VALUES[2]).to_pydict() == {"u": [VALUES[2]], "k": [3]}
    assert df.where(col("u") != lit(VALUES[0])).to_pydict()["k"] == [3, 4]
    assert df.select(lit(VALUES[3]).alias("l")).to_pydict()["l"] == [VALUES[3]] * 4
    # bytes order: greater compares the 16 bytes (big-endian integers)
    assert df.where(col("u") > lit(VALUES[2])).to_pydict()["k"] == [1, 4]


def test_casts_to_and_from_text_and_bytes():
    df = ketch.from_pydict({"u": VALUES})
    text = df.select(col("u").cast(DataType.string())).to_pydict()["u"]
    assert text == [None if v is None else str(v) for v in VALUES]
    raw = df.select(col("u").cast(DataType.binary())).to_pydict()["u"]
    assert raw == [None if v is None else v.bytes for v in VALUES]
    fixed = df.select(col("u").cast(DataType.fixed_size_binary(16))).to_pydict()["u"]
    assert fixed == raw
    strings = [str(VALUES[0]).upper(), None, VALUES[2].hex, str(VALUES[3])]
    parsed = ketch.from_pydict({"s": strings}).select(col("s").cast(DataType.uuid())).to_pydict()["s"]
    assert parsed == VALUES
    back = ketch.from_pydict({"b": raw}).select(col("b").cast(DataType.uuid())).to_pydict()["b"]
    assert back == VALUES


def test_bad_text_and_bytes_fail_naming_the_value():
    with pytest.raises(KetchError, match="'not-a-uuid' .* is not a UUID"):
        ketch.from_pydict({"s": ["not-a-uuid"]}).select(col("s").cast(DataType.uuid())).collect()
    with pytest.raises(KetchError, match="a UUID is 16 bytes"):
        ketch.from_pydict({"b": [b"short"]}).select(col("b").cast(DataType.uuid())).collect()
    with pytest.raises(KetchError, match="cannot cast"):
        ketch.from_pydict({"u": VALUES}).select(col("u").cast(DataType.int64())).collect()


def test_parquet_round_trip(tmp_path):
    ketch.from_pydict({"u": VALUES}).write_parquet(str(tmp_path))
    back = ketch.read_parquet(str(tmp_path))
    assert back.schema()["u"].dtype == DataType.uuid()
    assert back.to_pydict() == {"u": VALUES}
    written = next(tmp_path.glob("*.parquet"))
    assert pq.read_table(written).column("u").to_pylist() == VALUES
