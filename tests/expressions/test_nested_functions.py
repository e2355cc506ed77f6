"""List, map and struct kernels (``.list`` / ``.map`` / ``.struct`` and ``ketch.functions``) against
plain-Python references on random lists with nulls, null lists and empty lists."""

from __future__ import annotations

import statistics
from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

import ketch
from ketch import col, lit
from ketch import functions as F


@pytest.fixture
def lists(rng: np.random.Generator) -> list[list[int | None] | None]:
    out: list[list[int | None] | None] = []
    for i in range(300):
        if i % 13 == 0:
            out.append(None)
            continue
        n = int(rng.integers(0, 8))
        row = [int(v) for v in rng.integers(-5, 6, size=n)]
        out.append([None if (j + i) % 5 == 0 else v for j, v in enumerate(row)])
    return out


def _run(values: list, expr: ketch.Expression, dtype: pa.DataType | None = None) -> list:
    array = pa.array(values, type=dtype or pa.large_list(pa.int64()))
    return ketch.from_arrow(pa.table({"l": array})).select(expr.alias("out")).to_pydict()["out"]


def _rows(values: list, fn) -> list:
    return [None if v is None else fn(v) for v in values]


def _non_null(row: list) -> list:
    return [v for v in row if v is not None]


@pytest.mark.parametrize("dtype", [pa.large_list(pa.int64()), pa.list_(pa.int32())])
def test_length_count_and_get(lists, dtype):
    assert _run(lists, col("l").list.length(), dtype) == _rows(lists, len)
    assert _run(lists, F.list_count(col("l")), dtype) == _rows(lists, lambda r: len(_non_null(r)))
    assert _run(lists, col("l").list.count("null"), dtype) == _rows(lists, lambda r: r.count(None))
    for idx in (0, 2, -1, -3, 10):
        expected = _rows(lists, lambda r, idx=idx: r[idx] if -len(r) <= idx < len(r) else None)
        assert _run(lists, col("l").list.get(idx), dtype) == expected
    expected = _rows(lists, lambda r: r[1] if len(r) > 1 else 99)
    assert _run(lists, col("l").list.get(1, default=99), dtype) == expected


def test_get_with_index_column():
    table = pa.table({"l": pa.array([[1, 2, 3], [4], None, []]), "i": [2, -1, 0, 0]})
    out = ketch.from_arrow(table).select(col("l").list.get(col("i")).alias("x")).to_pydict()["x"]
    assert out == [3, 4, None, None]


@pytest.mark.parametrize("start,end", [(0, None), (1, 3), (-2, None), (2, 1), (-10, 10), (0, -1)])
def test_slice_follows_python_slicing(lists, start, end):
    expected = _rows(lists, lambda r: r[start:end])
    assert _run(lists, col("l").list.slice(start, end)) == expected
    assert _run(lists, F.slice(col("l"), start, end)) == expected


@pytest.mark.parametrize("size", [1, 2, 3])
def test_chunk_drops_the_partial_tail(lists, size):
    expected = _rows(lists, lambda r: [r[k : k + size] for k in range(0, len(r) - len(r) % size, size)])
    out_df = ketch.from_arrow(pa.table({"l": pa.array(lists, pa.large_list(pa.int64()))})).select(
        F.chunk(col("l"), size).alias("c")
    )
    assert out_df.schema().field("c").type == pa.large_list(pa.list_(pa.int64(), size))
    assert out_df.to_pydict()["c"] == expected


def test_chunk_size_must_be_positive():
    with pytest.raises(ValueError, match="chunk size"):
        col("l").list.chunk(0)


@pytest.mark.parametrize("desc", [False, True])
@pytest.mark.parametrize("nulls_first", [False, True])
def test_sort(lists, desc, nulls_first):
    def reference(row: list) -> list:
        values = sorted(_non_null(row), reverse=desc)
        nulls = [None] * row.count(None)
        return nulls + values if nulls_first else values + nulls

    assert _run(lists, col("l").list.sort(desc=desc, nulls_first=nulls_first)) == _rows(lists, reference)
    assert _run(lists, F.list_sort(col("l"), desc, nulls_first)) == _rows(lists, reference)


def test_distinct_keeps_first_occurrence_and_drops_nulls(lists):
    expected = _rows(lists, lambda r: list(dict.fromkeys(_non_null(r))))
    assert _run(lists, col("l").list.distinct()) == expected
    assert _run(lists, F.list_distinct(col("l"))) == expected


def test_value_counts(lists):
    out = _run(lists, F.value_counts(col("l")))
    expected = _rows(lists, lambda r: list(Counter(_non_null(r)).items()))
    assert out == expected
    df = ketch.from_arrow(pa.table({"l": pa.array([["a", "b", "a"]], pa.large_list(pa.large_string()))}))
    assert df.select(col("l").list.value_counts().alias("m")).schema().field("m").type == pa.map_(
        pa.large_string(), pa.uint64()
    )


def test_contains(lists):
    for item in (0, 3, -5):
        expected = _rows(lists, lambda r, item=item: item in _non_null(r))
        assert _run(lists, col("l").list.contains(item)) == expected
        assert _run(lists, F.list_contains(col("l"), item)) == expected


def test_aggregates_match_python(lists):
    def agg(fn):
        return _rows(lists, lambda r: fn(_non_null(r)) if _non_null(r) else None)

    assert _run(lists, col("l").list.sum()) == agg(sum)
    assert _run(lists, F.list_min(col("l"))) == agg(min)
    assert _run(lists, F.list_max(col("l"))) == agg(max)
    means = _run(lists, col("l").list.mean())
    for got, want in zip(means, agg(statistics.fmean), strict=True):
        assert (got is None and want is None) or got == pytest.approx(want)


def test_float_sum_and_bool_aggregates():
    floats = [[1.5, None, 2.25], [], None, [float("inf"), 1.0]]
    assert _run(floats, F.list_sum(col("l")), pa.large_list(pa.float64())) == [3.75, None, None, float("inf")]
    bools = [[True, True], [True, False], [None, None], [], None, [False, None]]
    dtype = pa.large_list(pa.bool_())
    assert _run(bools, F.list_bool_and(col("l")), dtype) == [True, False, None, None, None, False]
    assert _run(bools, F.list_bool_or(col("l")), dtype) == [True, True, None, None, None, False]


def test_join_strings():
    values = [["a", "b", "c"], [], None, ["x"]]
    out = _run(values, col("l").list.join("-"), pa.large_list(pa.large_string()))
    assert out == ["a-b-c", "", None, "x"]
    assert _run(values, F.list_join(col("l"), ", "), pa.list_(pa.string())) == ["a, b, c", "", None, "x"]


def test_sliced_and_fixed_size_inputs():
    table = pa.table({"l": pa.array([[9, 9], [3, 1, 2], None, [5, 4]], pa.large_list(pa.int64()))}).slice(1)
    out = ketch.from_arrow(table).select(col("l").list.sort().alias("s")).to_pydict()["s"]
    assert out == [[1, 2, 3], None, [4, 5]]
    fixed = pa.array([[3, 1], [2, 2], None], pa.list_(pa.int64(), 2))
    assert _run([[3, 1], [2, 2], None], col("l").list.sum(), fixed.type) == [4, 4, None]
    assert _run([[3, 1], [2, 2], None], col("l").list.distinct(), fixed.type) == [[3, 1], [2], None]


def test_explode_expression_keeps_empty_rows_as_null():
    df = ketch.from_pydict({"id": [1, 2, 3, 4], "l": [[1, 2], [], None, [3]]})
    out = df.select(col("id"), F.explode(col("l")).alias("x")).to_pydict()
    assert out == {"id": [1, 1, 2, 3, 4], "x": [1, 2, None, None, 3]}
    out = df.with_column("x", col("l").explode()).sort("id").to_pydict()
    assert out["x"] == [1, 2, None, None, 3]


def test_map_get(rng):
    rows = []
    for i in range(100):
        if i % 11 == 0:
            rows.append(None)
            continue
        keys = [f"k{int(k)}" for k in rng.choice(6, size=int(rng.integers(0, 5)), replace=False)]
        rows.append([(k, int(rng.integers(0, 100))) for k in keys])
    table = pa.table({"m": pa.array(rows, pa.map_(pa.large_string(), pa.int64())), "k": ["k1"] * 100})
    df = ketch.from_arrow(table)
    for key in ("k0", "k3", "missing"):
        expected = [None if r is None else dict(r).get(key) for r in rows]
        assert df.select(col("m").map.get(key).alias("v")).to_pydict()["v"] == expected
        assert df.select(F.map_get(col("m"), key).alias("v")).to_pydict()["v"] == expected
    expected = [None if r is None else dict(r).get("k1") for r in rows]
    assert df.select(col("m").map.get(col("k")).alias("v")).to_pydict()["v"] == expected


def test_struct_get():
    rows = [{"a": 1, "b": "x"}, None, {"a": None, "b": "z"}]
    df = ketch.from_pydict({"s": rows})
    out = df.select(col("s").struct.get("a"), col("s").struct.get("b")).to_pydict()
    assert out == {"a": [1, None, None], "b": ["x", None, "z"]}
    with pytest.raises(ValueError, match="'c'.*fields: a, b"):
        df.select(col("s").struct.get("c"))


def test_wrong_types_fail_at_plan_time():
    df = ketch.from_pydict({"n": [1, 2], "s": ["a", "b"]})
    for expr, label in [
        (col("n").list.sum(), "list.sum"),
        (col("n").list.get(0), "list.get"),
        (col("s").list.sort(), "list.sort"),
        (col("n").list.length(), "list.count"),
        (col("n").map.get("a"), "map.get"),
        (col("n").struct.get("a"), "struct.get"),
    ]:
        with pytest.raises(TypeError, match=label) as info:
            df.select(expr)
        assert "col(" in str(info.value)
    lists = ketch.from_pydict({"l": [[1, 2]]})
    with pytest.raises(TypeError, match="list.get"):
        lists.select(col("l").list.get("x"))
    with pytest.raises(TypeError, match="list.contains"):
        lists.select(col("l").list.contains(lit([1])))


def test_options_travel_to_the_ray_runner(runner):
    """Kernel options (sort order, chunk size, field names, formats, intervals) survive plan
    serialization: the same answers on both runners."""
    import datetime as dt

    df = ketch.from_pydict(
        {
            "l": [[3, 1, 2], None, [5, 4]],
            "s": [{"a": 1}, {"a": 2}, None],
            "t": [dt.datetime(2024, 2, 29, 13, 45), None, dt.datetime(1969, 12, 31, 23, 59, 59)],
        }
    )
    out = df.select(
        col("l").list.sort(desc=True).alias("sorted"),
        col("l").list.chunk(2).alias("chunks"),
        col("s").struct.get("a"),
        col("t").dt.strftime("%d/%m/%Y %H").alias("text"),
        col("t").dt.truncate("1 hour").alias("hour"),
        (col("t") + ketch.interval(months=1)).alias("later"),
    ).to_pydict()
    assert out == {
        "sorted": [[3, 2, 1], None, [5, 4]],
        "chunks": [[[3, 1]], None, [[5, 4]]],
        "a": [1, 2, None],
        "text": ["29/02/2024 13", None, "31/12/1969 23"],
        "hour": [dt.datetime(2024, 2, 29, 13), None, dt.datetime(1969, 12, 31, 23)],
        "later": [dt.datetime(2024, 3, 29, 13, 45), None, dt.datetime(1970, 1, 31, 23, 59, 59)],
    }


def test_append_flatten_to_list_and_map_keys(lists):
    assert _run(lists, col("l").list.append(7)) == _rows(lists, lambda r: [*r, 7])
    nested = [[[1, 2], None, []], None, [], [[3], [None, 4]]]
    out = _run(nested, F.list_flatten(col("l")), pa.large_list(pa.large_list(pa.int64())))
    assert out == [[1, 2], None, [], [3, None, 4]]
    df = ketch.from_pydict({"a": [1, None, 3], "b": [4, 5, None]})
    assert df.select(F.to_list(col("a"), col("b"), 0).alias("l")).to_pydict()["l"] == [
        [1, 4, 0],
        [None, 5, 0],
        [3, None, 0],
    ]
    maps = pa.array([[("x", 1), ("y", 2)], None, []], pa.map_(pa.large_string(), pa.int64()))
    keys = ketch.from_arrow(pa.table({"m": maps})).select(F.map_keys(col("m")).alias("k")).to_pydict()["k"]
    assert keys == [["x", "y"], None, None]  # Daft 0.7.26: an empty map's keys are null
    with pytest.raises(TypeError, match="list.flatten"):
        ketch.from_pydict({"l": [[1]]}).select(col("l").list.flatten())
