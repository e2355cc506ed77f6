"""Daft's DataFrame conveniences: global aggregation shorthands, ``columns``, renames, ``pipe``,
``transform``, ``shuffle``, ``to_arrow_iter``, iteration and ``in``; GroupedDataFrame
``list_agg``/``string_agg``."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

import ketch
from ketch import col

DATA = {"a": [4, None, 1, 7, 2], "f": [0.5, 1.5, None, -2.0, 4.0], "s": ["x", "y", None, "z", "w"]}


@pytest.fixture
def df() -> ketch.DataFrame:
    return ketch.from_pydict(DATA).into_partitions(2)


def test_global_numeric_shorthands_match_pandas(df: ketch.DataFrame) -> None:
    pdf = pd.DataFrame(DATA)
    assert df.sum("a", "f").to_pydict() == {"a": [int(pdf.a.sum())], "f": [pdf.f.sum()]}
    assert df.mean("a").to_pydict()["a"] == [pytest.approx(pdf.a.mean())]
    assert df.min("a", col("f")).to_pydict() == {"a": [1], "f": [-2.0]}
    assert df.max("a", "f", "s").to_pydict() == {"a": [7], "f": [4.0], "s": ["z"]}
    assert df.stddev("a", ddof=1).to_pydict()["a"] == [pytest.approx(pdf.a.std(ddof=1))]
    assert df.stddev("f", ddof=0).to_pydict()["f"] == [pytest.approx(pdf.f.std(ddof=0))]


def test_shorthands_with_no_columns_aggregate_every_column(df: ketch.DataFrame) -> None:
    out = df.select("a", "f").sum().to_pydict()
    assert out == {"a": [14], "f": [4.0]}


def test_any_value_list_and_concat_shorthands(df: ketch.DataFrame) -> None:
    assert df.any_value("a").to_pydict()["a"][0] in DATA["a"]
    listed = df.agg_list("a", "s").to_pydict()
    assert sorted(listed["a"][0], key=lambda v: (v is None, v)) == [1, 2, 4, 7, None]
    assert sorted(listed["s"][0], key=lambda v: (v is None, v)) == ["w", "x", "y", "z", None]
    concat = ketch.from_pydict({"s": ["ab", None, "cd"]}).agg_concat("s").to_pydict()
    assert concat == {"s": ["abcd"]}
    joined = ketch.from_pydict({"s": ["ab", None, "cd"]}).agg_concat("s", delimiter=",").to_pydict()
    assert joined == {"s": ["ab,cd"]}


def test_grouped_list_agg_and_string_agg() -> None:
    df = ketch.from_pydict(
        {"k": [1, 2, 1, 2, 1], "v": [10, 20, None, 40, 50], "s": ["a", "b", "c", None, "e"]}
    )
    listed = df.groupby("k").list_agg("v").sort("k").to_pydict()
    assert listed["k"] == [1, 2]
    assert [sorted(x, key=lambda v: (v is None, v)) for x in listed["v"]] == [[10, 50, None], [20, 40]]
    assert listed == df.groupby("k").agg_list("v").sort("k").to_pydict()
    joined = df.groupby("k").string_agg("s").sort("k").to_pydict()
    assert joined["k"] == [1, 2]
    assert sorted(joined["s"][0]) == sorted("ace") and joined["s"][1] == "b"
    sd = df.groupby("k").stddev("v", ddof=1).sort("k").to_pydict()["v"]
    assert sd == [
        pytest.approx(pd.Series([10, 50]).std(ddof=1)),
        pytest.approx(pd.Series([20, 40]).std(ddof=1)),
    ]


def test_columns_contains_and_iter(df: ketch.DataFrame) -> None:
    assert [c.name() for c in df.columns] == ["a", "f", "s"]
    assert "a" in df and "nope" not in df
    rows = [row for row in df]
    assert rows == [dict(zip(DATA, values, strict=True)) for values in zip(*DATA.values(), strict=True)]


def test_with_column_renamed(df: ketch.DataFrame) -> None:
    renamed = df.with_column_renamed("a", "b")
    assert renamed.column_names == ["b", "f", "s"]
    assert renamed.to_pydict()["b"] == DATA["a"]
    assert df.with_column_renamed("missing", "q").column_names == ["a", "f", "s"]
    many = df.with_columns_renamed({"a": "A", "s": "S", "missing": "M"})
    assert many.column_names == ["A", "f", "S"]
    assert many.to_pydict() == {"A": DATA["a"], "f": DATA["f"], "S": DATA["s"]}
    swapped = df.with_columns_renamed({"a": "s", "s": "a"}).to_pydict()
    assert swapped["s"] == DATA["a"] and swapped["a"] == DATA["s"]


def test_pipe_and_transform(df: ketch.DataFrame) -> None:
    assert df.pipe(lambda d, n: d.count_rows() + n, 10) == 15

    def add(d: ketch.DataFrame, k: int, name: str = "a2") -> ketch.DataFrame:
        return d.with_column(name, col("a") + k)

    assert df.transform(add, 1, name="z").to_pydict()["z"] == [5, None, 2, 8, 3]
    with pytest.raises(TypeError, match="must return a DataFrame"):
        df.transform(lambda d: 3)


def test_to_arrow_iter(df: ketch.DataFrame) -> None:
    batches = list(df.to_arrow_iter())
    assert all(isinstance(b, pa.RecordBatch) for b in batches)
    assert pa.Table.from_batches(batches).to_pydict() == DATA
    collected = df.collect()
    assert pa.Table.from_batches(list(collected.to_arrow_iter())).to_pydict() == DATA


def test_shuffle_keeps_rows_is_seeded_and_reorders() -> None:
    df = ketch.from_pydict({"i": list(range(1000)), "s": [str(i) for i in range(1000)]}).into_partitions(4)
    first = df.shuffle(seed=42).to_pydict()
    again = df.shuffle(seed=42).to_pydict()
    other = df.shuffle(seed=7).to_pydict()
    assert first == again
    assert sorted(first["i"]) == list(range(1000))
    assert first["s"] == [str(i) for i in first["i"]]  # rows stay whole
    assert first["i"] != list(range(1000))
    assert other["i"] != first["i"]
    assert df.shuffle(seed=42).num_partitions() == df.sort("i").num_partitions()  # a global sort
    unseeded = df.shuffle().to_pydict()["i"]
    assert sorted(unseeded) == list(range(1000))
    with pytest.raises(ValueError, match="seed"):
        df.shuffle(seed=1.5)  # type: ignore[arg-type]


def test_shuffle_of_empty_and_filtered() -> None:
    df = ketch.from_pydict({"x": [1, 2, 3, 4]})
    assert df.where(col("x") > 10).shuffle(seed=1).to_pydict() == {"x": []}
    kept = df.where(col("x") % 2 == 0).shuffle(seed=3).to_pydict()["x"]
    assert sorted(kept) == [2, 4]


def test_arrow_pycapsule_interface(df: ketch.DataFrame) -> None:
    assert pa.schema(df) == pa.schema([("a", pa.int64()), ("f", pa.float64()), ("s", pa.string())])
    assert pa.table(df).to_pydict() == DATA
    assert pa.table(df.where(col("a") > 3)).to_pydict() == {"a": [4, 7], "f": [0.5, -2.0], "s": ["x", "z"]}
