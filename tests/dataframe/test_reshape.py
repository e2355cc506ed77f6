"""unpivot / melt and explode's Daft options (index_column, ignore_empty_and_null): checked
against pandas.melt and plain Python on data with nulls, on both runners."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

import ketch
from ketch import col
from ketch.errors import ColumnNotFoundError, KetchTypeError, KetchValueError


def _sorted_records(table: dict[str, list], keys: list[str]) -> list[tuple]:
    names = list(table)
    rows = list(zip(*[table[n] for n in names], strict=True))
    idx = [names.index(k) for k in keys]
    return sorted(rows, key=lambda r: tuple((r[i] is None, str(r[i])) for i in idx))


def test_unpivot_daft_example(runner):
    df = ketch.from_pydict({"year": [2020, 2021, 2022], "Jan": [10, 30, 50], "Feb": [20, 40, 60]})
    out = df.unpivot("year", ["Jan", "Feb"], variable_name="month", value_name="inventory")
    assert out.column_names == ["year", "month", "inventory"]
    assert out.schema().field("inventory").type == pa.int64()
    assert out.sort("year").to_pydict() == {
        "year": [2020, 2020, 2021, 2021, 2022, 2022],
        "month": ["Jan", "Feb", "Jan", "Feb", "Jan", "Feb"],
        "inventory": [10, 20, 30, 40, 50, 60],
    }


def test_unpivot_matches_pandas_melt(rng, runner):
    n = 200
    data = {
        "id": list(range(n)),
        "g": [["a", "b", None][i % 3] for i in range(n)],
        "x": [None if v < 0.1 else float(v) for v in rng.random(n)],
        "y": [int(v) for v in rng.integers(0, 100, n)],
        "z": [None if v % 7 == 0 else int(v) for v in rng.integers(0, 50, n)],
    }
    df = ketch.from_pydict(data).into_partitions(3)
    out = df.unpivot(["id", "g"], ["x", "y", "z"])  # float64, int64, int64 → float64
    assert out.schema().field("value").type == pa.float64()
    expected = pd.melt(pd.DataFrame(data), id_vars=["id", "g"], value_vars=["x", "y", "z"])
    want = {
        "id": expected["id"].tolist(),
        "g": [None if pd.isna(v) else v for v in expected["g"]],
        "variable": expected["variable"].tolist(),
        "value": [None if pd.isna(v) else float(v) for v in expected["value"]],
    }
    got = out.to_pydict()
    assert _sorted_records(got, ["id", "variable"]) == _sorted_records(want, ["id", "variable"])


def test_unpivot_row_order_and_defaults():
    df = ketch.from_pydict({"k": [1, 2], "a": [10, 20], "b": [30, 40]})
    # values default to every column that is not an id; rows come row by row.
    assert df.unpivot("k").to_pydict() == {
        "k": [1, 1, 2, 2],
        "variable": ["a", "b", "a", "b"],
        "value": [10, 30, 20, 40],
    }
    assert df.melt("k").to_pydict() == df.unpivot("k").to_pydict()
    assert df.melt(col("k"), col("b"), "var", "val").to_pydict() == {
        "k": [1, 2],
        "var": ["b", "b"],
        "val": [30, 40],
    }
    # No ids: only the variable / value columns.
    assert df.unpivot([], ["a"]).to_pydict() == {"variable": ["a", "a"], "value": [10, 20]}


def test_unpivot_supertypes_follow_daft():
    df = ketch.from_pydict(
        {
            "k": [1],
            "i32": pa.array([1], pa.int32()),
            "u32": pa.array([2], pa.uint32()),
            "f32": pa.array([0.5], pa.float32()),
            "s": ["x"],
            "bin": [b"x"],
        }
    )
    assert df.unpivot("k", ["i32", "u32"]).schema().field("value").type == pa.int64()
    assert df.unpivot("k", ["i32", "f32"]).schema().field("value").type == pa.float64()
    mixed = df.unpivot("k", ["i32", "s"])  # a number meets a string as a string
    assert mixed.to_pydict()["value"] == ["1", "x"]
    with pytest.raises(KetchTypeError, match="supertype"):
        df.unpivot("k", ["i32", "bin"])


def test_unpivot_errors():
    df = ketch.from_pydict({"k": [1], "a": [2]})
    with pytest.raises(KetchValueError, match="at least one value column"):
        df.unpivot(["k", "a"])
    with pytest.raises(ColumnNotFoundError):
        df.unpivot("k", ["missing"])
    with pytest.raises(KetchValueError, match="distinct names"):
        df.unpivot("k", ["a"], variable_name="k")


def test_explode_options_daft_example(runner):
    df = ketch.from_pydict(
        {"id": [1, 2, 3, 4], "values": [[1, 2], [], None, [3]], "labels": [["a", "b"], [], None, ["c"]]}
    )
    plain = df.explode("values", "labels").sort("id").to_pydict()
    assert plain == {
        "id": [1, 1, 2, 3, 4],
        "values": [1, 2, None, None, 3],
        "labels": ["a", "b", None, None, "c"],
    }
    dropped = df.explode(col("values"), "labels", ignore_empty_and_null=True).sort("id").to_pydict()
    assert dropped == {"id": [1, 1, 4], "values": [1, 2, 3], "labels": ["a", "b", "c"]}
    indexed = df.explode("values", "labels", index_column="pos").sort(["id", "pos"])
    assert indexed.column_names == ["id", "values", "labels", "pos"]
    assert indexed.schema().field("pos").type == pa.uint64()
    assert indexed.to_pydict()["pos"] == [0, 1, None, None, 0]
    both = df.explode("values", index_column="pos", ignore_empty_and_null=True).sort(["id", "pos"])
    assert both.select("id", "values", "pos").to_pydict() == {
        "id": [1, 1, 4],
        "values": [1, 2, 3],
        "pos": [0, 1, 0],
    }


def test_explode_errors():
    df = ketch.from_pydict({"id": [1], "v": [[1]]})
    with pytest.raises(KetchTypeError, match="not a list"):
        df.explode("id")
    with pytest.raises(KetchValueError, match="already exists"):
        df.explode("v", index_column="id")
    with pytest.raises(ColumnNotFoundError):
        df.explode("nope")
