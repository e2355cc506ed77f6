"""The DataType surface: Daft's constructors, inference from Python values, Daft's cast rules, and
the temporal / nested / decimal types through Parquet, CSV and JSON round trips."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pyarrow as pa
import pytest

import ketch
from ketch import DataType, TimeUnit, col


def test_constructors_are_the_arrow_types():
    assert DataType.date() == pa.date32()
    assert DataType.time(TimeUnit.us()) == pa.time64("us")
    assert DataType.time("ms") == pa.time32("ms")
    assert DataType.timestamp(TimeUnit.ns(), "UTC") == pa.timestamp("ns", tz="UTC")
    assert DataType.timestamp("us") == pa.timestamp("us")
    assert DataType.duration(TimeUnit.ms()) == pa.duration("ms")
    assert DataType.interval() == pa.month_day_nano_interval()
    assert DataType.decimal128(10, 2) == pa.decimal128(10, 2)
    assert DataType.fixed_size_binary(16) == pa.binary(16)
    assert DataType.null() == pa.null()
    assert DataType.uint16() == pa.uint16()
    assert DataType.list(DataType.int32()) == pa.large_list(pa.int32())
    assert DataType.fixed_size_list(DataType.float32(), 3) == pa.list_(pa.float32(), 3)
    assert DataType.struct({"a": DataType.int64(), "b": DataType.string()}) == pa.struct(
        [("a", pa.int64()), ("b", pa.large_string())]
    )
    assert DataType.map(DataType.string(), DataType.int64()) == pa.map_(pa.large_string(), pa.int64())
    assert DataType.from_arrow_type(pa.int8()).to_arrow_dtype() == pa.int8()
    assert TimeUnit.from_str("nanoseconds") == TimeUnit.ns()
    with pytest.raises(ValueError, match="'h'"):
        TimeUnit.from_str("h")
    with pytest.raises(ValueError, match="precision"):
        DataType.decimal128(40, 2)
    with pytest.raises(TypeError):
        DataType.from_arrow_type("int64")


def test_inference_from_python_values():
    df = ketch.from_pydict(
        {
            "ts": [dt.datetime(2024, 2, 29, 1, 2, 3), None],
            "d": [dt.date(2024, 2, 29), None],
            "td": [dt.timedelta(seconds=5), None],
            "dec": [decimal.Decimal("1.25"), None],
            "s": [{"a": 1, "b": "x"}, None],
            "tensor": [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((1, 2), np.float32)],
        }
    )
    schema = df.schema()
    assert schema.field("ts").type == pa.timestamp("us")
    assert schema.field("d").type == pa.date32()
    assert schema.field("td").type == pa.duration("us")
    assert pa.types.is_decimal(schema.field("dec").type)
    assert schema.field("s").type == pa.struct([("a", pa.int64()), ("b", pa.string())])
    assert schema.field("tensor").type == DataType.tensor(DataType.float32()).to_arrow()
    out = df.to_pydict()
    assert out["ts"][0] == dt.datetime(2024, 2, 29, 1, 2, 3)
    assert out["dec"][0] == decimal.Decimal("1.25")
    assert out["s"] == [{"a": 1, "b": "x"}, None]
    # tensors come back as numpy arrays of their shape (as Daft)
    assert out["tensor"][1].shape == (1, 2) and out["tensor"][1].tolist() == [[1.0, 1.0]]
    assert out["tensor"][0].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_python_types_as_dtypes():
    assert DataType._infer(dt.datetime) == pa.timestamp("us")
    assert DataType._infer(dt.date) == pa.date32()
    assert DataType._infer(dt.timedelta) == pa.duration("us")


def test_float_to_int_cast_truncates_like_daft(rng):
    values = [float(v) for v in rng.uniform(-1e6, 1e6, size=200)] + [1.9, -1.9, 0.5, -0.0, None]
    df = ketch.from_pydict({"x": values})
    out = df.select(col("x").cast(DataType.int64())).to_pydict()["x"]
    assert out == [None if v is None else int(v) for v in values]  # int() truncates toward zero


def test_timestamp_cast_to_a_coarser_unit_truncates():
    values = [dt.datetime(2024, 1, 1, 0, 0, 1, 999_000), None]
    df = ketch.from_pydict({"t": values})
    out = df.select(col("t").cast(DataType.timestamp("s"))).to_pydict()["t"]
    assert out == [dt.datetime(2024, 1, 1, 0, 0, 1), None]
    assert df.select(col("t").cast(DataType.date())).to_pydict()["t"] == [dt.date(2024, 1, 1), None]


def _typed_table() -> pa.Table:
    return pa.table(
        {
            "d": pa.array([dt.date(2024, 2, 29), None, dt.date(1969, 7, 20)], pa.date32()),
            "ts": pa.array(
                [dt.datetime(2024, 2, 29, 12, 30, 1, 250_000), None, dt.datetime(1900, 1, 1)],
                pa.timestamp("us"),
            ),
            "tz": pa.array([0, None, 1_700_000_000_000_000], pa.timestamp("us", tz="UTC")),
            "dec": pa.array([decimal.Decimal("12.34"), None, decimal.Decimal("-0.01")], pa.decimal128(10, 2)),
            "i": pa.array([1, None, -3], pa.int32()),
            "f": pa.array([1.5, None, -2.25], pa.float64()),
            "b": pa.array([True, None, False]),
            "s": pa.array(["a", None, "ü"], pa.large_string()),
        }
    )


def _nested_table() -> pa.Table:
    return pa.table(
        {
            "l": pa.array([[1, None], None, []], pa.large_list(pa.int64())),
            "st": pa.array([{"x": 1, "y": "a"}, None, {"x": None, "y": "c"}]),
            "m": pa.array([[("k", 1)], None, []], pa.map_(pa.large_string(), pa.int64())),
            "fsb": pa.array([b"ab", None, b"cd"], pa.binary(2)),
            "t": pa.array([dt.time(1, 2, 3), None, dt.time(23, 59, 59, 999_999)], pa.time64("us")),
            "dur": pa.array([dt.timedelta(seconds=5), None, dt.timedelta(days=-1)], pa.duration("us")),
            "fsl": pa.array([[1.0, 2.0], None, [3.0, 4.0]], pa.list_(pa.float32(), 2)),
        }
    )


def test_parquet_round_trip_keeps_every_type(tmp_path):
    table = pa.Table.from_arrays(
        _typed_table().columns + _nested_table().columns,
        names=_typed_table().column_names + _nested_table().column_names,
    )
    ketch.from_arrow(table).write_parquet(str(tmp_path))
    back = ketch.read_parquet(str(tmp_path)).to_arrow()
    for name in table.column_names:
        assert back.column(name).type == table.column(name).type, name
        assert back.column(name).to_pylist() == table.column(name).to_pylist(), name


def test_csv_round_trip_with_schema(tmp_path):
    table = _typed_table()
    ketch.from_arrow(table).write_csv(str(tmp_path))
    schema = {name: DataType.from_arrow_type(table.column(name).type) for name in table.column_names}
    back = ketch.read_csv(str(tmp_path), schema=schema).to_arrow()
    for name in table.column_names:
        want = table.column(name).to_pylist()
        if pa.types.is_large_string(table.column(name).type) or pa.types.is_string(table.column(name).type):
            want = [v if v is not None else "" for v in want]  # CSV: a null string reads back as "" (Daft)
        assert back.column(name).to_pylist() == want, name


def test_json_round_trip_with_schema(tmp_path):
    table = _typed_table().drop_columns(["dec"])
    table = pa.Table.from_arrays(
        table.columns + [_nested_table().column("l"), _nested_table().column("st")],
        names=table.column_names + ["l", "st"],
    )
    ketch.from_arrow(table).write_json(str(tmp_path))
    schema = {name: DataType.from_arrow_type(table.column(name).type) for name in table.column_names}
    back = ketch.read_json(str(tmp_path), schema=schema).to_arrow()
    for name in table.column_names:
        assert back.column(name).to_pylist() == table.column(name).to_pylist(), name
