"""GroupedDataFrame.map_groups and @ketch.udaf, with the values Daft 0.7.26 prints for the same
frames (Daft's docstring examples; its Series.sum() is a one-value Series, read with to_pylist)."""

from __future__ import annotations

import statistics

import pytest

import ketch
from ketch import DataType, Series, col

ROWS = {"group": ["a", "a", "a", "b", "b", "b", None], "data": [1, 20, 30, 4, 50, 600, 7]}


def test_map_groups_one_value_per_group():
    df = ketch.from_pydict(ROWS)

    @ketch.func.batch(return_dtype=DataType.float64())
    def std_dev(data):
        return [statistics.stdev(data)] if len(data) > 1 else [0.0]

    got = df.groupby("group").map_groups(std_dev(df["data"])).sort("group").to_pydict()
    assert got == {"group": ["a", "b", None], "data": [14.730919862656235, 331.62026476076517, 0.0]}


def test_map_groups_many_values_per_group_and_several_inputs():
    df = ketch.from_pydict(ROWS)

    @ketch.func.batch(return_dtype=DataType.int64())
    def twice(data):
        return [x * 2 for x in data.to_pylist()]

    got = df.groupby("group").map_groups(twice(df["data"])).sort(["group", "data"]).to_pydict()
    assert got == {"group": ["a", "a", "a", "b", "b", "b", None], "data": [2, 40, 60, 8, 100, 1200, 14]}

    @ketch.func.batch(return_dtype=DataType.int64())
    def first_sum(a, b):
        return [x + y for x, y in zip(a.to_pylist(), b.to_pylist(), strict=True)][:1]

    df2 = ketch.from_pydict({"g": [1, 1, 2], "x": [1, 2, 3], "y": [10, 20, 30]})
    assert df2.groupby("g").map_groups(first_sum(df2["x"], df2["y"])).sort("g").to_pydict() == {
        "g": [1, 2],
        "x": [11, 33],
    }
    aliased = df2.groupby("g").map_groups(first_sum(df2["x"], df2["y"]).alias("z")).sort("g")
    assert aliased.to_pydict() == {"g": [1, 2], "z": [11, 33]}


def test_map_groups_of_a_plain_expression_is_an_error():
    df2 = ketch.from_pydict({"g": [1], "x": [1]})
    with pytest.raises(ValueError, match="map_groups expects a UDF call"):
        df2.groupby("g").map_groups(col("x") + 1)


@ketch.udaf(return_dtype=DataType.float64(), state=DataType.float64())
class MySum:
    def aggregate(self, values: Series) -> float:
        return float(values.sum())

    def combine(self, states: Series) -> float:
        return float(states.sum())

    def finalize(self, state: float) -> float:
        return state


@ketch.udaf(return_dtype=DataType.float64(), state={"sum": DataType.float64(), "count": DataType.int64()})
class MyMean:
    def aggregate(self, values: Series) -> dict:
        return {"sum": float(values.sum()), "count": int(values.count())}

    def combine(self, states: dict) -> dict:
        return {"sum": float(states["sum"].sum()), "count": int(states["count"].sum())}

    def finalize(self, state: dict) -> float:
        return state["sum"] / state["count"]


def test_udaf_single_and_multi_state_grouped_and_global():
    df = ketch.from_pydict(ROWS)
    my_sum, my_mean = MySum(), MyMean()
    grouped = df.groupby("group").agg(
        my_sum(df["data"]), my_mean(df["data"]).alias("m"), col("data").count().alias("n")
    )
    assert grouped.sort("group").to_pydict() == {
        "group": ["a", "b", None],
        "data": [51.0, 654.0, 7.0],
        "m": [17.0, 218.0, 7.0],
        "n": [3, 3, 1],
    }  # Daft 0.7.26
    assert df.agg(my_sum(df["data"]), my_mean(df["data"]).alias("m")).to_pydict() == {
        "data": [712.0],
        "m": [101.71428571428571],
    }


def test_udaf_inside_an_expression_and_incomplete_classes_are_errors():
    df = ketch.from_pydict(ROWS)
    with pytest.raises(ValueError, match="must be an aggregation of its own"):
        df.agg(MySum()(df["data"]) + 1)
    with pytest.raises(TypeError, match="must define finalize"):

        @ketch.udaf(return_dtype=DataType.int64(), state=DataType.int64())
        class Broken:
            def aggregate(self, values):
                return 0

            def combine(self, states):
                return 0


def test_series_aggregations_are_one_value_series():
    s = Series.from_pylist([1, 2, None, 3])
    got = {
        m: getattr(s, m)().to_pylist() for m in ["sum", "count", "mean", "min", "max", "stddev", "product"]
    }
    # Daft 0.7.26: sum [6], count [3], mean [2.0], min [1], max [3], stddev [1.0], product [6]
    assert got == {
        "sum": [6],
        "count": [3],
        "mean": [2.0],
        "min": [1],
        "max": [3],
        "stddev": [1.0],
        "product": [6],
    }
    assert float(s.sum()) == 6.0 and int(s.count()) == 3


def test_error_classes_where_daft_raises():
    from ketch.exceptions import ExpressionTypeError

    # Daft: explode of a non-list column is a ValueError (DaftCoreException); Ketch's error is
    # both a TypeError and a ValueError
    with pytest.raises(ValueError, match="not a list"):
        ketch.from_pydict({"a": [1, 2]}).explode("a").collect()
    with pytest.raises(TypeError, match="not a list"):
        ketch.from_pydict({"a": [1, 2]}).explode("a").collect()
    # Daft: ExpressionTypeError "Cannot groupby on null type expression: col(g)"
    with pytest.raises(ExpressionTypeError, match=r"Cannot groupby on null type expression: col\(g\)"):
        ketch.from_pydict({"g": [None, None], "v": [1, 2]}).groupby("g").agg(col("v").sum()).collect()
