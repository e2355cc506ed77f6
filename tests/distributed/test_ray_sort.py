"""The distributed sort on Ray (a real 3-node local cluster): sample, range shuffle map and a
Sort per range on the engine workers, with exactly the native runner's output (multi-key, mixed
directions and null placements, NaNs, duplicates kept in input order: the sort is stable), and a
top-k for a small limit over a sort."""

from __future__ import annotations

import datetime as dt
import io
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import ketch
from ketch import col
from ketch.runners import get_runner
from ketch.runners.ray.sort_stage import TOP_K_MAX_ROWS, weighted_sample


def _columns(df: Any) -> dict[str, list[Any]]:
    """The columns in row order, NaN as the string "NaN" (so that equal results compare equal)."""
    return {
        name: ["NaN" if isinstance(v, float) and math.isnan(v) else v for v in values]
        for name, values in df.to_pydict().items()
    }


def _native_then_ray(build: Callable[[], Any]) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """``build()``'s rows (in order) on the native runner, then on the Ray runner (already set)."""
    ray_runner = get_runner()
    ketch.set_runner_native()
    try:
        native = _columns(build())
    finally:
        ketch.runners._runner = ray_runner
    return native, _columns(build())


def _kinds(runner: Any) -> list[str]:
    return [s.kind for s in runner.last_stages]


def _stage(runner: Any, kind: str) -> Any:
    (stage,) = [s for s in runner.last_stages if s.kind == kind]
    return stage


def _random_table(rng: np.random.Generator, n: int) -> pa.Table:
    """Duplicate-heavy keys of every sortable kind, nulls in each, NaNs in the floats; ``id`` is
    the input row number (it shows the order ties come out in)."""
    a = rng.integers(0, 12, n)
    f = rng.choice([0.5, 1.5, 2.5, np.nan, -1.0], n)
    base = dt.datetime(2024, 1, 1)
    return pa.table(
        {
            "a": pa.array([None if i % 13 == 0 else int(x) for i, x in enumerate(a)], pa.int64()),
            "f": pa.array([None if i % 11 == 0 else float(x) for i, x in enumerate(f)], pa.float64()),
            "s": pa.array([None if i % 17 == 0 else f"k{x}" for i, x in enumerate(rng.integers(0, 9, n))]),
            "t": pa.array(
                [base + dt.timedelta(hours=int(h)) for h in rng.integers(0, 30, n)], pa.timestamp("us")
            ),
            "id": pa.array(np.arange(n)),
        }
    )


def test_multi_key_mixed_directions_and_null_placements_equal_the_native_sort(on_ray, rng):
    data = ketch.from_arrow(_random_table(rng, 3000)).into_partitions(6).collect()
    cases = [
        (["a", "f", "s"], [True, False, False], [False, True, False]),
        (["s", "t"], [False, True], [True, True]),
        (["f"], [True], [False]),  # NaNs next to the nulls, as Arrow's sort places them
        (["f"], [True], [True]),
        (["f", "s"], [False, True], [True, False]),
        (["t", "a"], [False, False], [False, True]),
    ]
    for keys, desc, nulls in cases:
        native, on_cluster = _native_then_ray(lambda: data.sort(keys, desc=desc, nulls_first=nulls))  # noqa: B023
        assert on_cluster == native, (keys, desc, nulls)
        assert _kinds(on_ray) == ["sample", "range shuffle map", "reduce"], _kinds(on_ray)
        sample, shuffle, reduce = on_ray.last_stages
        assert sample.tasks == 6 and sample.rows_out == 3000
        assert shuffle.tasks == 6 and shuffle.buckets == 6 and shuffle.rows_out == 3000
        assert shuffle.bytes_shuffled > 0
        assert reduce.tasks == 6 and reduce.rows_out == 3000 and reduce.name.endswith("(reduce: Sort)")
        assert len(reduce.tasks_per_node) >= 2, reduce.tasks_per_node
    # Ties keep the input order (stable): with a key of few values, the ids of each run increase.
    out = data.sort("s", desc=True, nulls_first=False).to_pydict()
    for i in range(1, len(out["id"])):
        if out["s"][i] == out["s"][i - 1]:
            assert out["id"][i] > out["id"][i - 1]


def test_ranges_are_balanced_and_partitions_stream_in_sort_order(on_ray, rng):
    values = rng.permutation(12_000)
    data = ketch.from_arrow(pa.table({"x": values, "y": values * 2})).into_partitions(6).collect()
    parts = [p.to_pydict()["x"] for p in data.sort("x").iter_partitions()]
    assert [x for p in parts for x in p] == list(range(12_000))
    assert len(parts) == 6
    assert all(1_000 <= len(p) <= 3_000 for p in parts), [len(p) for p in parts]  # sampled cuts: ~2000 each
    assert data.sort("x").collect().num_partitions() == 6
    on_ray.max_shuffle_partitions = 4  # caps the ranges
    parts = [p.to_pydict()["x"] for p in data.sort("x", desc=True).iter_partitions()]
    assert [x for p in parts for x in p] == list(range(11_999, -1, -1))
    assert len(parts) == 4 and _stage(on_ray, "range shuffle map").buckets == 4
    assert _stage(on_ray, "sample").tasks == 6 and _stage(on_ray, "reduce").tasks == 4


def test_a_project_above_the_sort_runs_in_the_sort_tasks_and_computed_keys_come_from_with_column(on_ray, rng):
    data = ketch.from_arrow(_random_table(rng, 600)).into_partitions(4).collect()

    def build():
        return (
            data.with_column("key", col("a") * -2)
            .sort(["key", "id"], desc=[True, False])
            .select("id", "key", (col("a") + 1).alias("a1"))
        )

    native, on_cluster = _native_then_ray(build)
    assert on_cluster == native
    assert len(native["id"]) == 600
    assert on_ray.last_stages[-1].name.endswith("(reduce: Sort -> Project)")
    assert on_ray.last_stages[0].name.startswith("stage 1 (sample: InMemorySource -> Project -> sample")
    # Expressions as sort keys (Daft's computed keys): hidden key columns, sorted by on the workers.
    native, on_cluster = _native_then_ray(lambda: data.sort([col("a") * -2, "id"], desc=[True, False]))
    assert on_cluster == native and list(native) == list(data.column_names)


def test_empty_input_one_value_and_all_null_keys(on_ray, rng):
    data = ketch.from_arrow(_random_table(rng, 400)).into_partitions(4).collect()

    native, on_cluster = _native_then_ray(lambda: data.where(col("id") < 0).sort("a"))
    assert on_cluster == native == {name: [] for name in ["a", "f", "s", "t", "id"]}
    assert _kinds(on_ray) == ["sample", "range shuffle map", "reduce"]
    assert _stage(on_ray, "reduce").tasks == 1  # no sample: one range

    one_value = data.with_column("c", col("id") * 0)
    native, on_cluster = _native_then_ray(lambda: one_value.sort("c", desc=True))
    assert on_cluster == native
    assert on_cluster["id"] == list(range(400))  # every row in one range, input order kept

    all_null = (
        ketch.from_arrow(pa.table({"k": pa.nulls(400, pa.int64()), "id": list(range(400))}))
        .into_partitions(4)
        .collect()
    )
    native, on_cluster = _native_then_ray(lambda: all_null.sort("k", nulls_first=True))
    assert on_cluster == native and on_cluster["id"] == list(range(400))
    assert _stage(on_ray, "reduce").rows_out == 400


def test_sort_of_parquet_files_and_of_a_shuffle_and_a_single_partition(on_ray, tmp_path, rng):
    table = _random_table(rng, 900)
    for f in range(5):
        pq.write_table(table.slice(f * 180, 180), tmp_path / f"part-{f}.parquet")
    glob = str(tmp_path / "*.parquet")

    def by_string():
        return ketch.read_parquet(glob).sort(["s", "id"], desc=[True, True])

    def grouped():
        return (
            ketch.read_parquet(glob).groupby("s").agg(col("id").sum().alias("total")).sort("total", desc=True)
        )

    with ketch.execution_config_ctx(scan_tasks_min_size_bytes=1, max_sources_per_scan_task=1):
        native, on_cluster = _native_then_ray(by_string)  # one scan task per file
        assert on_cluster == native
        assert _kinds(on_ray) == ["sample", "range shuffle map", "reduce"]
        assert _stage(on_ray, "sample").name == "stage 1 (sample: Scan -> sample ['s', 'id'])"
        assert _stage(on_ray, "sample").tasks == 5 and _stage(on_ray, "reduce").tasks == 5

        native, on_cluster = _native_then_ray(grouped)
        assert on_cluster == native
        # The aggregate's reduce tasks are the sample stage's tasks.
        assert _kinds(on_ray) == ["shuffle map", "sample", "range shuffle map", "reduce"]
        assert "(sample: final Aggregate -> sample ['total'])" in on_ray.last_stages[1].name

    # Above a concat (its partitions: the inputs' task outputs in order, as object refs).
    both = ketch.from_arrow(table.slice(0, 500)).into_partitions(2).concat(ketch.from_arrow(table.slice(500)))
    native, on_cluster = _native_then_ray(lambda: both.sort(["t", "s"], desc=[True, False]))
    assert on_cluster == native
    # (the concat's inputs first: one partition cut in two, and one more)
    assert _kinds(on_ray)[-3:] == ["sample", "range shuffle map", "reduce"]
    assert "(sample: Concat -> sample ['t', 's'])" in on_ray.last_stages[-3].name
    assert on_ray.last_stages[-3].tasks == 3

    # Over a broadcast join: the sample tasks are the join's (each scan task with the small side).
    names = ketch.from_pydict({"s": [f"k{i}" for i in range(9)], "name": [f"n{i % 4}" for i in range(9)]})
    with ketch.execution_config_ctx(scan_tasks_min_size_bytes=1, max_sources_per_scan_task=1):
        native, on_cluster = _native_then_ray(
            lambda: ketch.read_parquet(glob).join(names, on="s").sort(["name", "a"], desc=[False, True])
        )
    assert on_cluster == native and len(native["id"]) > 700
    assert _kinds(on_ray) == ["broadcast", "sample", "range shuffle map", "reduce"]
    # (the Project puts the merged key "s" first: Daft's join column order)
    assert "(sample: Scan -> broadcast Join -> Project -> sample ['name', 'a'])" in on_ray.last_stages[1].name

    one = ketch.from_arrow(table)  # one partition: sorted in its own task, no shuffle
    native, on_cluster = _native_then_ray(lambda: one.sort(["f", "id"], desc=[True, False]))
    assert on_cluster == native
    assert [(s.kind, s.tasks) for s in on_ray.last_stages] == [("map", 1)]
    assert on_ray.last_stages[0].name.endswith("(map: InMemorySource -> Sort)")


def test_small_limit_over_a_sort_is_a_top_k_and_a_large_one_a_range_sort(on_ray, rng):
    data = ketch.from_arrow(_random_table(rng, 2000)).into_partitions(5).collect()

    native, on_cluster = _native_then_ray(lambda: data.sort(["a", "f"], desc=[False, True]).limit(25))
    assert on_cluster == native and len(native["id"]) == 25
    topk_map, merge = on_ray.last_stages
    assert topk_map.kind == "top-k map" and topk_map.tasks == 5 and topk_map.rows_out == 125
    assert merge.tasks == 1 and merge.rows_out == 25 and "top-k merge" in merge.name

    big = TOP_K_MAX_ROWS + 1
    native, on_cluster = _native_then_ray(lambda: data.sort("s", nulls_first=True).limit(big))
    assert on_cluster == native and len(native["id"]) == 2000
    assert _kinds(on_ray) == ["sample", "range shuffle map", "reduce"]  # then the limit on the driver


def test_explain_analyze_names_the_sort_stages(on_ray, rng):
    data = ketch.from_arrow(_random_table(rng, 300)).into_partitions(3).collect()
    report = io.StringIO()
    data.sort("a").explain_analyze(file=report)
    text = report.getvalue().split("== Stages ==")[1]
    assert re.search(r"\(sample: InMemorySource -> sample \['a'\]\): 3 tasks, [\d.]+ s, 300 rows out", text)
    assert re.search(
        r"\(range shuffle map: range partition by \['a'\] into 3\): 3 tasks, [\d.]+ s, 300 rows", text
    )
    assert re.search(r"\(reduce: Sort\): 3 tasks, [\d.]+ s, 300 rows out", text)


def test_range_shuffle_map_tasks_run_on_the_nodes_holding_their_inputs(on_ray, rng, monkeypatch):
    """Map task i of the range shuffle reads the table sample task i left in its node's object
    store: the coordinator is asked to run it there (node affinity, as the pre-shuffle merge
    does), and with room in every worker's backlog it does."""
    from ketch.runners.ray.coordinator import Coordinator

    asked: dict[str, Any] = {}
    run = Coordinator.run

    def recording_run(self: Coordinator, stage: Any, upstream: Any = None) -> Any:
        asked[stage.name] = stage.preferred_nodes
        return run(self, stage, upstream)

    monkeypatch.setattr(Coordinator, "run", recording_run)
    on_ray.max_task_backlog = 8  # the preferred worker always has room for its tasks
    table = _random_table(rng, 3000)
    data = ketch.from_arrow(table).into_partitions(6).collect()
    native, on_cluster = _native_then_ray(lambda: data.sort(["a", "id"], nulls_first=[True, False]))
    assert on_cluster == native
    sample, range_map = _stage(on_ray, "sample"), _stage(on_ray, "range shuffle map")
    assert sample.tasks == range_map.tasks == 6
    assert asked[range_map.name] == sample.task_nodes
    assert range_map.task_nodes == sample.task_nodes


def test_the_driver_weights_each_tasks_sample_by_its_rows():
    big = pa.table({"k": list(range(100))})
    small = pa.table({"k": list(range(1000, 1100))})
    sample = weighted_sample([big, small], [9_000, 1_000], 100)
    keys = sample.column("k").to_pylist()
    assert len([k for k in keys if k < 1000]) == 90 and len([k for k in keys if k >= 1000]) == 10
    assert weighted_sample([big.slice(0, 0)], [0], 100).num_rows == 0
