"""list_map / list_filter with ``ketch.element()``: the body runs natively on the list's values;
results are checked against plain Python over the same lists."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest

import ketch
from ketch import DataType, col, element, lit
from ketch.errors import KetchError
from ketch.functions import list_filter, list_map, upper

WORDS = [["a", "b", "a"], ["b", "c", "b", "c"], None, [], ["x", None]]


def test_list_map_upper_matches_daft_example():
    df = ketch.from_pydict({"letters": [["a", "b", "a"], ["b", "c", "b", "c"]]})
    out = df.with_column("caps", list_map(df["letters"], upper(element()))).to_pydict()
    assert out["caps"] == [["A", "B", "A"], ["B", "C", "B", "C"]]


def test_list_map_keeps_nulls_empties_and_null_elements():
    df = ketch.from_pydict({"w": WORDS})
    out = df.select(col("w").list_map(element().upper() + "!").alias("m")).to_pydict()["m"]
    expected = [
        None if row is None else [None if v is None else v.upper() + "!" for v in row] for row in WORDS
    ]
    assert out == expected


def test_list_map_changes_the_value_type(rng):
    lists = [list(map(int, rng.integers(-50, 50, size=int(rng.integers(0, 6))))) for _ in range(300)]
    lists[17] = None
    df = ketch.from_pydict({"l": lists})
    mapped = df.select(col("l").list_map((element() * 2).cast(DataType.float64()) / 4).alias("m"))
    # the list keeps its kind (from_pydict makes list<int64>): list<double>
    assert mapped.schema()["m"].dtype.to_arrow() == pa.list_(pa.float64())
    got = mapped.to_pydict()["m"]
    assert got == [None if row is None else [v * 2 / 4 for v in row] for row in lists]


def test_list_map_over_sliced_and_fixed_size_lists():
    table = pa.table({"f": pa.array([[1, 2], None, [3, 4], [5, 6]], pa.list_(pa.int32(), 2))})
    df = ketch.from_arrow(table).limit(4)
    out = df.select(col("f").list_map(element() + 1).alias("g")).to_arrow()
    assert out.column("g").type == pa.large_list(pa.int64())  # int32 + an int64 literal
    assert out.column("g").to_pylist() == [[2, 3], None, [4, 5], [6, 7]]
    # a morsel that starts mid-array (offsets not at zero) after a filter
    ints = ketch.from_pydict({"k": list(range(10)), "l": [[i, i + 1] for i in range(10)]})
    kept = ints.where(col("k") >= 6).select(col("l").list_map(element() * element()).alias("sq"))
    assert kept.to_pydict()["sq"] == [[i * i, (i + 1) * (i + 1)] for i in range(6, 10)]


def test_list_filter_matches_daft_example_and_python(rng):
    df = ketch.from_pydict({"letters": [["a", "b", "a"], ["b", "c", "b", "c"]]})
    out = df.with_column("no_b", list_filter(df["letters"], element() != "b")).to_pydict()
    assert out["no_b"] == [["a", "a"], ["c", "c"]]
    lists = [
        [None if rng.random() < 0.1 else float(v) for v in rng.normal(size=int(rng.integers(0, 8)))]
        for _ in range(400)
    ]
    lists[3] = None
    got = (
        ketch.from_pydict({"l": lists})
        .select(col("l").list_filter(element() > 0).alias("p"))
        .to_pydict()["p"]
    )
    # null elements give a null predicate and are dropped, as Daft documents
    assert got == [None if row is None else [v for v in row if v is not None and v > 0] for row in lists]


def test_list_filter_then_map_then_aggregate_compose():
    lists = [[1, 2, 3, 4], [5], None, [], [6, 7, 8]]
    df = ketch.from_pydict({"l": lists})
    out = df.select(
        col("l").list_filter(element() % 2 == 0).list_map(element() * 10).list_sum().alias("s"),
        col("l").list_map(element().cast(DataType.float64()).sqrt()).alias("r"),
    ).to_pydict()
    assert out["s"] == [60, None, None, None, 140]
    assert out["r"] == [None if row is None else [math.sqrt(v) for v in row] for row in lists]


def test_nested_lambdas_over_lists_of_lists():
    rows = [[[1, 2], [3]], [[], [4, 5, 6]], None]
    df = ketch.from_pydict({"ll": rows})
    out = df.select(col("ll").list_map(element().list_map(element() + 100)).alias("m")).to_pydict()["m"]
    assert out == [[[101, 102], [103]], [[], [104, 105, 106]], None]
    lengths = df.select(col("ll").list_filter(element().list_count() > 1).alias("f")).to_pydict()["f"]
    assert lengths == [[[1, 2]], [[4, 5, 6]], None]


def test_namespace_spelling_and_literal_body():
    df = ketch.from_pydict({"l": [[1, 2], [3]]})
    assert df.select(col("l").list.map(lit(0)).alias("z")).to_pydict()["z"] == [[0, 0], [0]]
    assert df.select(col("l").list.filter(lit(True)).alias("t")).to_pydict()["t"] == [[1, 2], [3]]


def test_lambdas_work_in_filters_and_after_projections():
    df = ketch.from_pydict({"id": [1, 2, 3], "l": [[1, 5], [2], [7, 8, 9]]})
    renamed = df.select(col("id"), col("l").alias("xs"))
    out = renamed.where(col("xs").list_filter(element() > 4).list_count() >= 2).select("id")
    assert out.to_pydict() == {"id": [3]}


def test_bad_bodies_fail_at_plan_time_naming_the_problem():
    df = ketch.from_pydict({"l": [[1, 2]], "s": ["a"], "x": [1]})
    with pytest.raises(KetchError, match="list_filter expects a boolean predicate"):
        df.select(col("l").list_filter(element() + 1)).collect()
    with pytest.raises(KetchError, match="reads column 'x'"):
        df.select(col("l").list_map(element() + col("x"))).collect()
    with pytest.raises(KetchError, match="list_map expects a list"):
        df.select(col("s").list_map(element())).collect()
    with pytest.raises(KetchError, match="column '' not found"):
        df.select(element() + 1).collect()


def test_lambda_round_trips_through_plan_serialization():
    from ketch import _core
    from ketch.context import get_execution_config

    df = ketch.from_pydict({"l": [[1, 2], None, [5]], "w": [["a"], ["bb", "c"], None]}).select(
        col("l").list_map(element() * 3).alias("m"),
        col("w").list_filter(element().length() > 1).alias("f"),
    )
    assert "list_map(col(l), (col() * lit(3)))" in repr(df._plan)
    config = get_execution_config().to_native()
    optimized = df._plan.optimize(config=config)
    copy = _core.PyPlan.from_bytes(optimized.to_bytes())
    assert repr(copy) == repr(optimized)
    _, reader = copy.execute(config, None)
    got = pa.Table.from_batches(list(reader), schema=reader.schema).to_pydict()
    assert got == {"m": [[3, 6], None, [15]], "f": [[], ["bb"], None]}
    assert df.to_pydict() == got
