"""count, describe, summarize, to_pylist, select keyword aliases, ketch.range, ketch.from_pylist:
Daft's output shapes, names and types."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import ketch
from ketch import col


def test_count_shapes(runner):
    df = ketch.from_pydict({"foo": [1, None, None], "bar": [None, 2, 2], "baz": [3, 4, 5]}).into_partitions(2)
    for out in (df.count(), df.count("*"), df.count(1)):
        assert out.to_pydict() == {"count": [3]}
        assert out.schema().field("count").type == pa.uint64()
    by_column = df.count("foo", col("bar"))
    assert by_column.to_pydict() == {"foo": [1], "bar": [2]}
    assert by_column.schema().types == [pa.uint64(), pa.uint64()]
    with pytest.raises(ValueError, match="both \\* and column names"):
        df.count("*", "foo")


def test_describe():
    df = ketch.from_pydict({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    out = df.describe()
    assert out.column_names == ["column_name", "type"]
    assert out.to_pydict() == {"column_name": ["a", "b"], "type": ["Int64", "String"]}


def test_summarize(rng, runner):
    n = 500
    x = [None if v < 0.1 else float(v) for v in rng.random(n)]
    k = [int(v) for v in rng.integers(0, 17, n)]
    s = [None if i % 5 == 0 else f"s{i % 9}" for i in range(n)]
    b = [bytes([i % 4]) for i in range(n)]
    df = ketch.from_pydict({"x": x, "k": k, "s": s, "l": [[i] for i in range(n)], "b": b}).into_partitions(3)
    out = df.summarize()
    assert out.column_names == [
        "column",
        "type",
        "min",
        "max",
        "count",
        "count_nulls",
        "approx_count_distinct",
    ]
    assert out.schema().field("count").type == pa.uint64()
    rows = {r["column"]: r for r in out.to_pylist()}
    assert list(rows) == ["x", "k", "s", "l", "b"]
    xs = [v for v in x if v is not None]
    assert float(rows["x"]["min"]) == pytest.approx(min(xs))
    assert float(rows["x"]["max"]) == pytest.approx(max(xs))
    assert rows["x"]["count"] == len(xs)
    assert rows["x"]["count_nulls"] == n - len(xs)
    assert rows["k"]["min"] == str(min(k)) and rows["k"]["max"] == str(max(k))
    assert rows["k"]["approx_count_distinct"] == len(set(k))
    present = [v for v in s if v is not None]
    assert (rows["s"]["min"], rows["s"]["max"]) == (min(present), max(present))
    assert rows["s"]["approx_count_distinct"] == len({v for v in s if v is not None})
    assert rows["s"]["type"] == "String"
    # A list column has no order: min / max / distinct are null, counts still there.
    assert rows["l"]["min"] is None and rows["l"]["approx_count_distinct"] is None
    assert rows["l"]["count"] == n and rows["l"]["count_nulls"] == 0
    # Binary: no min / max as strings, but distinct values are counted.
    assert rows["b"]["min"] is None and rows["b"]["approx_count_distinct"] == 4


def test_to_pylist_and_from_pylist(runner):
    rows = [{"b": "x", "a": 1}, {"b": "y"}, {"a": 3, "c": 2.5}]
    df = ketch.from_pylist(rows)
    assert df.column_names == ["a", "b", "c"]  # every key seen, sorted by name (Daft's order)
    assert df.to_pylist() == [
        {"a": 1, "b": "x", "c": None},
        {"a": None, "b": "y", "c": None},
        {"a": 3, "b": None, "c": 2.5},
    ]
    assert df.to_pylist() == list(df.iter_rows())
    empty = ketch.from_pylist([])
    assert empty.column_names == [] and empty.count_rows() == 0
    with pytest.raises(ValueError, match="row 1"):
        ketch.from_pylist([{"a": 1}, [1]])
    with pytest.raises(TypeError):
        ketch.from_pylist({"a": [1]})
    with pytest.raises(ValueError, match="maps_as_pydicts"):
        df.to_pylist(maps_as_pydicts="nope")


def test_range(runner):
    assert ketch.range(5).to_pydict() == {"id": [0, 1, 2, 3, 4]}
    assert ketch.range(2, 5).to_pydict() == {"id": [2, 3, 4]}
    assert ketch.range(10, 0, -3).to_pydict() == {"id": [10, 7, 4, 1]}
    df = ketch.range(0, 100, 7, partitions=4)
    assert df.schema().field("id").type == pa.int64()
    assert df.num_partitions() == 4
    parts = [p.to_pydict()["id"] for p in df.iter_partitions()]
    assert [len(p) for p in parts] == [4, 4, 4, 3]  # 15 values
    assert sum(parts, []) == list(range(0, 100, 7))
    assert ketch.range(0).count_rows() == 0
    assert ketch.range(3, partitions=None).num_partitions() == 1
    with pytest.raises(ValueError, match="step"):
        ketch.range(0, 5, 0)
    with pytest.raises(ValueError, match="partitions"):
        ketch.range(5, partitions=0)
    with pytest.raises(TypeError, match="end"):
        ketch.range(0, 2.5)


def test_select_keyword_aliases(runner):
    df = ketch.from_pydict({"x": [1, 2, 3], "y": [4, 5, 6]})
    out = df.select("x", doubled=col("y") * 2, x_plus=col("x") + 1)
    assert out.column_names == ["x", "doubled", "x_plus"]
    assert out.to_pydict() == {"x": [1, 2, 3], "doubled": [8, 10, 12], "x_plus": [2, 3, 4]}
    assert df.select(only=col("x")).to_pydict() == {"only": [1, 2, 3]}
    with pytest.raises(ValueError):
        df.select()
    assert np.array_equal(df.select("y").to_pydict()["y"], [4, 5, 6])
