"""Partial aggregation before the shuffle on Ray (a real 3-node local cluster): groupby/agg with
mergeable aggregations (sum, count, mean, min, max, any_value) runs a partial aggregate in every
map task, shuffles one row of partial states per group per task, and merges + finishes them in the
reduce tasks; global aggregates run a partial aggregate per task and one final task. Results equal
the native runner's; aggregations that collect values fall back to shuffling raw rows."""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa
import pytest
from ray_compare import native_then_ray

import ketch
from ketch import col
from ketch.errors import KetchError


def _rows(df: Any) -> list[str]:
    data = df.to_pydict()
    names = list(data)
    return sorted(repr(tuple(data[n][i] for n in names)) for i in range(len(data[names[0]])))


def _stages(runner: Any, kind: str) -> list[Any]:
    return [s for s in runner.last_stages if s.kind == kind]


def _table(n: int, groups: int) -> pa.Table:
    ids = list(range(n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "g": pa.array([None if i % 97 == 0 else i % groups for i in ids], pa.int64()),
            "v": pa.array([float(i % 13) if i % 11 else None for i in ids], pa.float64()),
            "s": [f"s{i % 5}" for i in ids],
        }
    )


def _partitioned(n: int, groups: int, parts: int) -> Any:
    return ketch.from_arrow(_table(n, groups)).into_partitions(parts).collect()


def test_groupby_runs_partial_aggregate_in_the_map_tasks_and_final_in_the_reduce_tasks(on_ray):
    data = _partitioned(3000, 25, 6)

    def build():
        return (
            data.where(col("id") > 20)
            .groupby("g", "s")
            .agg(
                col("v").sum().alias("sum"),
                col("v").mean().alias("mean"),
                col("v").count().alias("count"),
                col("id").count("all").alias("rows"),
                col("id").min().alias("min"),
                col("id").max().alias("max"),
                col("s").any_value().alias("any_s"),
                col("v").any_value(ignore_nulls=True).alias("any_v"),
            )
            .with_column("span", col("max") - col("min"))
        )

    native, on_cluster = native_then_ray(build)
    assert _rows(on_cluster) == _rows(native)
    groups = len(native.to_pydict()["g"])
    assert groups == 30  # 25 keys (each with one s), and the null key with all 5 s values
    maps, reduces = _stages(on_ray, "shuffle map"), _stages(on_ray, "reduce")
    assert len(maps) == 1 and len(reduces) == 1, [s.name for s in on_ray.last_stages]
    assert maps[0].tasks == 6 and maps[0].buckets == 6
    # one row of partial states per group per map task, not the 2979 input rows
    assert maps[0].rows_out <= 6 * groups
    assert reduces[0].rows_out == groups
    assert "partial Aggregate" in maps[0].name and "final Aggregate -> Project" in reduces[0].name
    report = io.StringIO()
    build().explain_analyze(file=report)
    text = report.getvalue().split("== Stages ==")[1]
    assert (
        "shuffle map: InMemorySource -> Filter -> partial Aggregate -> hash shuffle by ['g', 's'] into 6)"
        in text
    )
    assert "reduce: final Aggregate -> Project): 6 tasks" in text


def test_bytes_shuffled_drop_far_below_the_raw_rows(on_ray):
    data = _partitioned(100_000, 10, 4)

    def partial():
        return data.groupby("g").agg(col("v").sum().alias("s"), col("id").max().alias("m"))

    def raw():  # agg_list is single-phase: the same shuffle, of raw rows
        return data.groupby("g").agg(
            col("v").sum().alias("s"), col("id").max().alias("m"), col("s").agg_list().alias("l")
        )

    native, on_cluster = native_then_ray(partial)
    assert _rows(on_cluster) == _rows(native)
    partial_stage = _stages(on_ray, "shuffle map")[0]
    raw_result = raw().collect()
    raw_stage = _stages(on_ray, "shuffle map")[0]
    assert len(raw_result) == 11
    assert "partial Aggregate" in partial_stage.name and "partial" not in raw_stage.name
    assert raw_stage.rows_out == 100_000
    assert partial_stage.rows_out <= 4 * 11
    # raw rows: ~2.6 MB; states: 4 tasks x 11 groups x 4 columns
    assert raw_stage.bytes_shuffled > 2_000_000
    assert partial_stage.bytes_shuffled < 20_000
    assert partial_stage.bytes_shuffled * 100 < raw_stage.bytes_shuffled


def test_null_keys_float_zero_keys_and_many_groups(on_ray):
    n = 20_000
    keys = [
        None if i % 50 == 0 else (-0.0 if i % 7 == 0 else (0.0 if i % 7 == 1 else float(i % 3000)))
        for i in range(n)
    ]
    table = pa.table({"k": pa.array(keys, pa.float64()), "v": pa.array(range(n), pa.int64())})
    data = ketch.from_arrow(table).into_partitions(5).collect()

    def build():
        return data.groupby("k").agg(
            col("v").sum().alias("s"), col("v").count().alias("c"), col("v").min().alias("lo")
        )

    native, on_cluster = native_then_ray(build)
    assert _rows(on_cluster) == _rows(native)
    result = on_cluster.to_pydict()
    assert len(result["k"]) == len(native.to_pydict()["k"]) > 2000
    zero = [i for i, k in enumerate(result["k"]) if k == 0.0]
    assert len(zero) == 1  # -0.0 and 0.0 are one group
    assert result["c"][zero[0]] == sum(1 for k in keys if k == 0.0)
    nulls = [i for i, k in enumerate(result["k"]) if k is None]
    assert len(nulls) == 1 and result["c"][nulls[0]] == n // 50
    assert "partial Aggregate" in _stages(on_ray, "shuffle map")[0].name


def test_int64_sum_overflow_fails_on_ray_too(on_ray):
    big = 2**62
    table = pa.table({"g": [1, 1, 1, 1, 2, 2], "v": pa.array([big, big, big, big, 1, 2], pa.int64())})
    data = ketch.from_arrow(table).into_partitions(3).collect()
    with pytest.raises(KetchError, match="overflows int64"):
        data.groupby("g").agg(col("v").sum()).collect()
    with pytest.raises(KetchError, match="overflows int64"):
        data.agg(col("v").sum()).collect()


def test_global_aggregate_runs_partial_per_task_and_one_final_task(on_ray):
    data = _partitioned(5000, 10, 5)

    def build():
        return data.agg(
            col("v").sum().alias("s"),
            col("v").mean().alias("m"),
            col("id").count().alias("c"),
            col("id").min().alias("lo"),
            col("s").max().alias("hi"),
        )

    native, on_cluster = native_then_ray(build)
    assert on_cluster.to_pydict() == native.to_pydict()
    assert on_cluster.to_pydict()["c"] == [5000]
    maps, reduces = _stages(on_ray, "map"), _stages(on_ray, "reduce")
    assert len(maps) == 1 and maps[0].tasks == 5 and maps[0].rows_out == 5
    assert "partial Aggregate" in maps[0].name
    assert len(reduces) == 1 and reduces[0].tasks == 1 and reduces[0].rows_out == 1
    assert "final Aggregate" in reduces[0].name


def test_empty_input_grouped_and_global(on_ray):
    data = _partitioned(1000, 10, 4)

    def grouped():
        return data.where(col("id") < 0).groupby("g").agg(col("v").sum().alias("s"))

    def global_():
        return data.where(col("id") < 0).agg(col("v").sum().alias("s"), col("id").count().alias("c"))

    native, on_cluster = native_then_ray(grouped)
    assert len(on_cluster) == len(native) == 0
    assert on_cluster.schema() == native.schema()
    native, on_cluster = native_then_ray(global_)
    assert on_cluster.to_pydict() == native.to_pydict() == {"s": [None], "c": [0]}


def test_mixed_single_phase_aggregations_fall_back_to_the_raw_row_shuffle(on_ray):
    data = _partitioned(2000, 8, 4)

    def build():
        return data.groupby("g").agg(
            col("v").sum().alias("s"),
            col("v").stddev().alias("sd"),
            col("s").agg_concat().alias("cat"),
            col("id").approx_count_distinct().alias("d"),
        )

    native, on_cluster = native_then_ray(build)
    maps = _stages(on_ray, "shuffle map")
    assert len(maps) == 1 and "partial" not in maps[0].name and maps[0].rows_out == 2000

    def by_key(df: Any) -> dict[Any, tuple[Any, ...]]:
        d = df.to_pydict()
        return {
            d["g"][i]: (d["s"][i], d["sd"][i], sorted(d["cat"][i]), d["d"][i]) for i in range(len(d["g"]))
        }

    got, want = by_key(on_cluster), by_key(native)
    assert got.keys() == want.keys() and len(got) == 9  # 8 keys and null
    for key, (s, sd, cat, d) in want.items():
        assert got[key][0] == pytest.approx(s) and got[key][1] == pytest.approx(sd)
        assert got[key][2] == cat and got[key][3] == d
    # a single-phase global aggregate still runs on the driver
    data.agg(col("v").stddev()).collect()
    assert not any("partial" in s.name for s in on_ray.last_stages)


def test_key_expressions_and_arithmetic_over_aggregations(on_ray):
    # groupby(col("g") % 3) computes the key below the partial aggregate; sum()+max() is a
    # projection above the final one. Same rows as the native runner, and as plain Python.
    data = _partitioned(3000, 25, 6)
    table = _table(3000, 25).to_pydict()

    def build():
        return (
            data.groupby((col("g") % 3).alias("k"))
            .agg((col("id").sum() + col("id").max()).alias("t"), col("id").count().alias("n"))
            .sort("k")
        )

    native, ray = native_then_ray(build)
    assert native.to_pydict() == ray.to_pydict()
    expected: dict = {}
    for i, g in zip(table["id"], table["g"], strict=True):
        expected.setdefault(None if g is None else g % 3, []).append(i)
    keys = sorted(expected, key=lambda k: (k is None, k))
    assert ray.to_pydict() == {
        "k": keys,
        "t": [sum(expected[k]) + max(expected[k]) for k in keys],
        "n": [len(expected[k]) for k in keys],
    }
