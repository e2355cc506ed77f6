"""Daft 0.7.26's ``seq``, ``to_struct``, ``guess_mime_type`` (over bytes) and
``great_circle_distance``, and its parameterless types as values (``DataType.int64`` as well as
``DataType.int64()``). Every expected value below is what Daft 0.7.26 printed for the same
input (side venv, value by value)."""

from __future__ import annotations

import pickle

import pytest

import ketch
from ketch import DataType, col
from ketch.errors import KetchTypeError
from ketch.functions import great_circle_distance, guess_mime_type, seq, to_struct


def test_seq_lists_zero_to_n_minus_one_as_uint64():
    df = ketch.from_pydict({"n": [3, None, 0]}).with_column("s", seq(col("n")))
    assert df.to_pydict() == {"n": [3, None, 0], "s": [[0, 1, 2], None, []]}
    assert repr(df.schema()["s"].dtype) == "List[UInt64]"
    with pytest.raises(Exception, match=r"seq\(\) requires non-negative n, received: -2"):
        ketch.from_pydict({"n": [-2]}).with_column("s", seq(col("n"))).collect()
    with pytest.raises(KetchTypeError, match="Expected input to seq to be of integer type"):
        ketch.from_pydict({"n": [2.0]}).with_column("s", seq(col("n")))


def test_to_struct_names_fields_by_expression_and_keyword():
    df = ketch.from_pydict({"a": ["a", None], "b": [1, 2]})
    out = df.select(to_struct(df["a"], b2=df["b"] * 2))
    assert out.to_pydict() == {"struct": [{"a": "a", "b2": 2}, {"a": None, "b2": 4}]}
    assert repr(out.schema()["struct"].dtype) == "Struct[a: String, b2: Int64]"
    assert df.select(to_struct(df["a"], df["b"]).alias("x")).to_pydict() == {
        "x": [{"a": "a", "b": 1}, {"a": None, "b": 2}]
    }
    assert df.select(to_struct(df["a"], df["a"])).to_pydict() == {"struct": [{"a": "a"}, {"a": None}]}
    with pytest.raises(ValueError, match="Cannot call struct with no inputs"):
        to_struct()


def test_guess_mime_type_of_bytes_follows_dafts_signatures():
    cases = {
        b"\x89PNG\r\n\x1a\n": "image/png",
        b"\xff\xd8": "image/jpeg",
        b"%PDF": "application/pdf",
        b"GIF8": "image/gif",
        b"RIFF\x00\x00\x00\x00WEBP": "image/webp",
        b"PK\x03\x04": "application/zip",
        b"<html>": "text/html",
        b"<!DOCTYPE HTML>": "text/html",
        b"RIFF\x00\x00\x00\x00WAVE": "audio/wav",
        b"ID3": "audio/mpeg",
        b"\xff\xfb": "audio/mpeg",
        b"OggS": "audio/ogg",
        b"\x00\x00\x00\x18ftypqt  ": "video/mp4",
        b"\x00\x00\x01\xba": "video/mpeg",
        b"\x89HDF\r\n\x1a\n": "application/vnd.hdfgroup.hdf5",
        # Daft knows none of these: null, not octet-stream or text/plain.
        b"<!doctype html>": None,
        b"  <html>": None,
        b"\x89PNG\r\n\x1a": None,
        b"II*\x00": None,
        b"fLaC": None,
        b"\xff\xf3": None,
        b"hello world": None,
        b"": None,
    }
    df = ketch.from_pydict({"d": [*cases, None]})
    got = df.with_column("m", guess_mime_type(df["d"])).to_pydict()["m"]
    assert got == [*cases.values(), None]
    with pytest.raises(KetchTypeError, match="guess_mime_type expects binary data"):
        ketch.from_pydict({"s": ["x"]}).select(guess_mime_type(col("s")))


def test_great_circle_distance_in_metres_and_null_for_invalid_points():
    df = ketch.from_pydict(
        {
            "lat1": [0.0, 51.5, None, 95.0, 10.0],
            "lon1": [0.0, -0.12, 1.0, 0.0, float("nan")],
            "lat2": [0.0, 40.7, 1.0, 0.0, 1.0],
            "lon2": [1.0, -74.0, 1.0, 0.0, 1.0],
        }
    )
    got = df.select(great_circle_distance(df["lat1"], df["lon1"], df["lat2"], df["lon2"]).alias("m"))
    assert got.to_pydict() == {"m": [111194.92664455874, 5571490.771963043, None, None, None]}


def test_parameterless_types_are_values_and_callables():
    for name in ("int8", "int64", "uint16", "float32", "string", "bool", "binary", "null", "date", "python"):
        value = getattr(DataType, name)
        assert isinstance(value, DataType) and value() == value and value() is value
    assert DataType.int64.is_int64() and DataType.string.is_string() and not DataType.int64.is_string()
    assert repr(DataType.int64) == "Int64" and pickle.loads(pickle.dumps(DataType.date)) == DataType.date
    df = ketch.from_pydict({"a": [1, 2]}).with_column("b", col("a").cast(DataType.float64))
    assert df.to_pydict() == {"a": [1, 2], "b": [1.0, 2.0]}
    assert DataType.list(DataType.int64) == DataType.list(DataType.int64())


def test_slices_of_dataframes_lists_and_bytes():
    df = ketch.from_pydict({"a": [1, 2, 3], "b": [4, 5, 6], "c": [7, 8, 9]})
    assert df[1:3].column_names == ["b", "c"] and df[0:2].column_names == ["a", "b"]
    assert df[["a", "c"]].column_names == ["a", "c"] and df[["a", 1]].column_names == ["a", "b"]
    assert df[1:3].to_pydict() == {"b": [4, 5, 6], "c": [7, 8, 9]}
    lists = ketch.from_pydict({"x": [[1, 2, 3], [4, 5, 6, 7], [8]]})
    assert lists.select(lists["x"][1:-1]).to_pydict() == {"x": [[2], [5, 6], []]}
    assert lists.select(lists["x"][:2]).to_pydict() == {"x": [[1, 2], [4, 5], [8]]}
    with pytest.raises(ValueError, match="step"):
        lists["x"][::2]
    raw = ketch.from_pydict({"x": [b"Hello World", b"\xff\xfe\x00", b"empty", None]})
    out = raw.select(raw["x"].slice(1, -2))
    assert out.to_pydict() == {"x": [b"ello Wor", b"", b"mp", None]}
    assert repr(out.schema()["x"].dtype) == "Binary"


def test_cast_takes_python_types_and_sql_type_names():
    df = ketch.from_pydict({"a": [1, 2, 3]})
    out = df.select(
        df["a"].cast(str).alias("str"),
        df["a"].cast(float).alias("float"),
        df["a"].cast("string").alias("sql_string"),
        df["a"].cast("int").alias("sql_int"),
        df["a"].cast("tinyint").alias("sql_tinyint"),
    )
    assert [repr(f.dtype) for f in out.schema()] == ["String", "Float64", "String", "Int32", "Int8"]
    assert out.to_pydict()["sql_tinyint"] == [1, 2, 3] and out.to_pydict()["sql_string"] == ["1", "2", "3"]
    with pytest.raises(ValueError, match="not a SQL type name"):
        df["a"].cast("no such type")


def test_show_footer_counts_rows_when_the_query_gave_fewer_than_asked(capsys):
    # Daft 0.7.26: the total is printed when known: materialized, or fewer rows than n came back.
    df = ketch.from_pydict({"a": list(range(8))})
    for n, footer in (
        (9, "(Showing first 8 of 8 rows)"),
        (8, "(Showing first 8 rows)"),
        (3, "(Showing first 3 rows)"),
    ):
        df.select(df["a"] + 1).show(n)
        assert capsys.readouterr().out.rstrip().endswith(footer)
    df.select(df["a"] + 1).show(9, format="plain")
    assert capsys.readouterr().out.rstrip().endswith("(Showing first 8 of 8 rows)")
    df.show(3)
    assert capsys.readouterr().out.rstrip().endswith("(Showing first 3 of 8 rows)")


def test_a_struct_field_is_named_by_the_field():
    # Daft 0.7.26: ['name', 'age', 'l'] for get("name"), ["age"] and a list element.
    df = ketch.from_pydict({"structs": [{"name": "Alice", "age": 25}], "l": [[1, 2]]})
    out = df.select(df["structs"].get("name"), df["structs"]["age"], df["l"][0])
    assert out.to_pydict() == {"name": ["Alice"], "age": [25], "l": [1]}
