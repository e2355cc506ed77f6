"""Aggregations give Daft 0.7.26's values and types (issue 28). The expected values were read
from Daft 0.7.26 itself (benchmarks/.venv-peers) running the same queries; each test also checks
an independent oracle (statistics, numpy) where one exists."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pyarrow as pa
import pytest

import ketch
from ketch import DataType, col


def test_stddev_defaults_to_the_sample_value_as_daft() -> None:
    df = ketch.from_pydict({"g": [1, 2, 2], "x": [1.0, 2.0, 4.0]})
    got = df.groupby("g").agg(col("x").stddev().alias("s"), col("x").var().alias("v")).sort("g").to_pydict()
    # Daft: {'g': [1, 2], 's': [None, 1.4142135623730951], 'v': [None, 2.0]}
    assert got["s"][0] is None and got["v"] == [None, 2.0]
    assert math.isclose(got["s"][1], statistics.stdev([2.0, 4.0]), rel_tol=1e-12)
    total = ketch.from_pydict({"x": [1.0, 2.0, 4.0]}).agg(col("x").stddev()).to_pydict()["x"][0]
    assert math.isclose(total, 1.527525231651946, rel_tol=1e-12)  # Daft's value
    population = ketch.from_pydict({"x": [1.0, 2.0, 4.0]}).agg(col("x").stddev(ddof=0)).to_pydict()["x"][0]
    assert math.isclose(population, statistics.pstdev([1.0, 2.0, 4.0]), rel_tol=1e-12)
    # The shorthands and SQL follow: stddev / stddev_samp sample, stddev_pop population.
    shorthand = ketch.from_pydict({"x": [1.0, 2.0, 4.0]}).stddev("x").to_pydict()["x"][0]
    assert math.isclose(shorthand, total, rel_tol=1e-12)
    frame = ketch.from_pydict({"x": [1.0, 2.0, 4.0]})  # noqa: F841 (read by name in SQL)
    sql = ketch.sql("SELECT stddev(x) AS a, stddev_samp(x) AS b, stddev_pop(x) AS c FROM frame").to_pydict()
    assert math.isclose(sql["a"][0], total) and math.isclose(sql["b"][0], total)
    assert math.isclose(sql["c"][0], population)


def test_a_float32_sum_stays_float32() -> None:
    values = np.random.default_rng(1).normal(size=1000).astype(np.float32)
    df = ketch.from_arrow(pa.table({"g": np.arange(1000) % 3, "x": values}))
    total = df.agg(col("x").sum())
    assert total.schema()["x"].dtype == DataType.float32()  # Daft: Float32
    got = total.to_pydict()["x"][0]
    assert got == float(np.float32(values.astype(np.float64).sum()))  # summed in float64, rounded once
    grouped = df.groupby("g").agg(col("x").sum()).sort("g").to_pydict()["x"]
    want = [float(np.float32(values[np.arange(1000) % 3 == k].astype(np.float64).sum())) for k in range(3)]
    assert grouped == want


@pytest.mark.parametrize("grouped", [False, True])
def test_distinct_aggregations_of_an_all_null_column(grouped: bool) -> None:
    # Arrow's grouped distinct kernels crashed the process on a Null-typed input.
    df = ketch.from_pydict({"g": [1, 1, 2], "x": [None, None, None]})
    aggs = [
        col("x").list_agg_distinct().alias("distinct"),
        col("x").agg_set().alias("set"),
        col("x").count_distinct().alias("ndv"),
        col("x").list_agg().alias("list"),
    ]
    got = (df.groupby("g").agg(*aggs).sort("g") if grouped else df.agg(*aggs)).to_pydict()
    groups = 2 if grouped else 1
    # Daft: list_agg_distinct of nulls [[]]; list_agg keeps them.
    assert got["distinct"] == [[]] * groups and got["set"] == [[]] * groups
    assert got["ndv"] == [0] * groups
    assert got["list"] == ([[None, None], [None]] if grouped else [[None, None, None]])


@pytest.mark.parametrize("values", [[None], [None, None, None]])
def test_distinct_of_null_inputs_in_every_shape(values: list) -> None:
    df = ketch.from_arrow(pa.table({"x": pa.array(values, pa.null())}))
    for source in (df, df.into_partitions(2)):
        got = source.agg(col("x").list_agg_distinct().alias("d"), col("x").count_distinct().alias("n"))
        row = got.to_pydict()
        assert row["n"] == [0]
        assert row["d"] == [[]]  # Daft: [[]]
