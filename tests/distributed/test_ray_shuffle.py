"""Hash-shuffle stages on Ray (a real 3-node local cluster): groupby/agg, distinct, joins of every
kind and repartition(n, keys) run as shuffle map tasks + reduce tasks on the engine workers, with
the native runner's results; the stage stats show where the work ran."""

from __future__ import annotations

import io
import os
import signal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from ray_compare import native_then_ray

import ketch
from ketch import col


def _canonical(value: Any) -> Any:
    if isinstance(value, list):
        return sorted(value, key=repr)
    return value


def _rows(df: Any) -> list[str]:
    """The rows as a sorted list of reprs (lists sorted too): for results without a defined order."""
    data = df.to_pydict()
    names = list(data)
    return sorted(repr(tuple(_canonical(data[n][i]) for n in names)) for i in range(len(data[names[0]])))


def _stage(runner: Any, kind: str) -> list[Any]:
    return [s for s in runner.last_stages if s.kind == kind]


def _table(ids: list[int]) -> pa.Table:
    return pa.table(
        {
            "id": ids,
            # skewed: half the rows in group 0; some null groups
            "g": [None if i % 17 == 0 else (0 if i % 2 else i % 7) for i in ids],
            "v": [float(i % 13) if i % 11 else None for i in ids],
            "s": [f"s{i % 4}" for i in ids],
        }
    )


def _data() -> Any:
    """360 rows in 6 materialized partitions (6 map tasks)."""
    return ketch.from_arrow(_table(list(range(360)))).into_partitions(6).collect()


def _files(tmp_path: Any, n_files: int = 6, rows: int = 60) -> str:
    for f in range(n_files):
        pq.write_table(_table(list(range(f * rows, (f + 1) * rows))), tmp_path / f"part-{f:02d}.parquet")
    return str(tmp_path / "*.parquet")


def test_groupby_aggregations_run_as_shuffle_map_and_reduce_tasks_on_the_workers(on_ray, tmp_path):
    data = _data()

    def build():
        return (
            data.where(col("id") > 20)
            .groupby("g", "s")
            .agg(
                col("v").sum().alias("sum"),
                col("v").mean().alias("mean"),
                col("v").count().alias("count"),
                col("id").min().alias("min"),
                col("id").max().alias("max"),
                col("id").agg_list().alias("ids"),
            )
            .with_column("span", col("max") - col("min"))
        )

    native, on_cluster = native_then_ray(build)
    assert _rows(on_cluster) == _rows(native)
    assert len(native.to_pydict()["g"]) > 8
    maps, reduces = _stage(on_ray, "shuffle map"), _stage(on_ray, "reduce")
    assert len(maps) == 1 and len(reduces) == 1, [s.name for s in on_ray.last_stages]
    assert maps[0].tasks == 6 and maps[0].buckets == 6
    assert maps[0].rows_out == 360 - 21
    assert maps[0].bytes_shuffled > 0
    assert reduces[0].tasks == 6
    assert reduces[0].rows_out == len(native.to_pydict()["g"])
    assert sum(reduces[0].tasks_per_node.values()) == 6
    assert len(reduces[0].tasks_per_node) >= 2, reduces[0].tasks_per_node
    assert "Aggregate" in reduces[0].name and "Project" in reduces[0].name
    assert on_cluster.num_partitions() == 6
    report = io.StringIO()
    build().explain_analyze(file=report)
    text = report.getvalue().split("== Stages ==")[1]
    assert "shuffle map: InMemorySource -> Filter -> hash shuffle by ['g', 's'] into 6): 6 tasks" in text
    assert "reduce: Aggregate -> Project): 6 tasks" in text and "MB shuffled" in text


def test_distinct_and_a_driver_sort_above_a_shuffle(on_ray, tmp_path):
    data = _data()
    native, on_cluster = native_then_ray(lambda: data.select("g", "s").distinct())
    assert _rows(on_cluster) == _rows(native)
    assert _stage(on_ray, "reduce")[0].tasks == 6

    glob = _files(tmp_path)

    def ordered():
        return ketch.read_parquet(glob).groupby("g").agg(col("id").sum()).sort("g", nulls_first=True).limit(4)

    native, on_cluster = native_then_ray(ordered)
    assert on_cluster.to_pydict() == native.to_pydict()  # sort + limit on the driver keep their order
    assert len(_stage(on_ray, "reduce")) == 1  # parquet scan tasks: as many as the files make


@pytest.mark.parametrize("how", ["inner", "left", "outer", "anti"])
def test_a_raw_plan_join_on_keys_of_different_types_is_shuffled_on_cast_keys(on_ray, tmp_path, how):
    glob = _files(tmp_path)
    # A join on keys of different types (int64 x int32) built below DataFrame.join (which casts
    # keys to their common type): the stage planner shuffles both sides on hidden columns holding
    # the keys cast to the type the join compares them in, and the join runs unchanged.
    other = ketch.from_pydict(
        {"id": list(range(0, 400, 3)) + [None], "w": list(range(134)) + [7]}
    ).with_column("id", col("id").cast(ketch.DataType.int32()))

    def joined(strategy: str) -> ketch.DataFrame:
        left = ketch.read_parquet(glob)
        return ketch.DataFrame(left._plan.join(other._plan, ["id"], ["id"], how, "right.", "", strategy))

    native, on_cluster = native_then_ray(lambda: joined("hash"))
    assert on_cluster.schema() == native.schema()  # no hidden column left, key types unchanged
    assert _rows(on_cluster) == _rows(native)
    assert len(native) > 100
    maps, reduces = _stage(on_ray, "shuffle map"), _stage(on_ray, "reduce")
    assert len(maps) == 2 and len(reduces) == 1, [s.name for s in on_ray.last_stages]
    assert all("__ketch_shuffle_key_0__" in m.name for m in maps), [m.name for m in maps]
    assert not any("driver" in s.name for s in on_ray.last_stages)
    assert "Join" in reduces[0].name

    # The default strategy broadcasts the small right side where the join type allows.
    native, on_cluster = native_then_ray(lambda: joined("").groupby("s").agg(col("id").count()))
    assert _rows(on_cluster) == _rows(native)
    assert not any("driver" in s.name for s in on_ray.last_stages), [s.name for s in on_ray.last_stages]
    if how in ("inner", "left", "anti"):
        assert _stage(on_ray, "broadcast"), [s.name for s in on_ray.last_stages]


def test_a_shuffle_above_a_driver_operator(on_ray, tmp_path):
    glob = _files(tmp_path)

    # A limit is no longer a driver operator: it runs in every scan task, then in order.
    native, on_cluster = native_then_ray(
        lambda: ketch.read_parquet(glob).limit(100).into_partitions(4).groupby("s").agg(col("id").sum())
    )
    assert _rows(on_cluster) == _rows(native)
    assert not any("driver" in s.name for s in on_ray.last_stages)

    # A limit over a sort is a top-k on the workers (sort_stage.py): here in the one scan task.
    native, on_cluster = native_then_ray(
        lambda: (
            ketch.read_parquet(glob)
            .sort("id")
            .limit(100)
            .into_partitions(4)
            .groupby("s")
            .agg(col("id").sum())
        )
    )
    assert _rows(on_cluster) == _rows(native)
    assert [s.kind for s in on_ray.last_stages] == ["shuffle map", "reduce"]
    assert "Scan -> Sort -> Limit -> partial Aggregate -> hash shuffle" in on_ray.last_stages[0].name


def _sides() -> tuple[Any, Any]:
    left = {
        "k": [1] * 40 + [2, 2, 3, None, None, 5, 7] + list(range(10, 30)),  # key 1 skewed
        "a": list(range(67)),
    }
    right = {
        "k": [1, 1, 2, None, 4, 5, 5, 6] + list(range(20, 40)),
        "b": [f"r{i}" for i in range(28)],
    }
    return (
        ketch.from_pydict(left).into_partitions(5).collect(),
        ketch.from_pydict(right).into_partitions(3).collect(),
    )


@pytest.mark.parametrize("how", ["inner", "left", "right", "outer", "semi", "anti"])
def test_joins_of_every_kind_shuffle_both_sides_into_the_same_buckets(on_ray, how):
    on_ray.broadcast_join_size_bytes_threshold = -1  # never broadcast
    left, right = _sides()
    native, on_cluster = native_then_ray(
        lambda: left.join(right, on="k", how=how).with_column("one", col("a") + 1)
    )
    assert _rows(on_cluster) == _rows(native), how
    maps, reduces = _stage(on_ray, "shuffle map"), _stage(on_ray, "reduce")
    # (the right side runs first where it could have been broadcast)
    assert sorted((m.tasks, m.buckets, m.rows_out) for m in maps) == [(3, 5, 28), (5, 5, 67)]
    assert reduces[0].tasks == 5 and "Join" in reduces[0].name
    assert reduces[0].rows_out == len(native.to_pydict()["k"])


def test_join_on_differently_named_keys_then_groupby(on_ray):
    on_ray.broadcast_join_size_bytes_threshold = -1
    left, right = _sides()
    right = (
        right.with_column_renamed("k", "rk")
        if hasattr(right, "with_column_renamed")
        else right.select(col("k").alias("rk"), "b")
    )
    native, on_cluster = native_then_ray(
        lambda: left.join(right, left_on="k", right_on="rk", how="left").groupby("k").agg(col("b").count())
    )
    assert _rows(on_cluster) == _rows(native)
    # The join's reduce tasks are the groupby's shuffle map tasks (join, then hash by "k").
    maps = _stage(on_ray, "shuffle map")
    assert [m.tasks for m in maps] == [3, 5, 5] and "Join" in maps[2].name
    assert [r.tasks for r in _stage(on_ray, "reduce")] == [5]


@pytest.mark.parametrize("how", ["inner", "left", "semi", "anti", "right", "outer"])
def test_a_small_right_side_is_broadcast_to_the_left_sides_tasks(on_ray, tmp_path, how):
    left, right = _sides()
    glob = _files(tmp_path)  # a split scan under the broadcast join, then a groupby above it
    scan_right = right.select(col("k").alias("g"), "b")

    def build():
        return ketch.read_parquet(glob).join(scan_right, on="g", how=how).groupby("s").agg(col("id").count())

    native, on_cluster = native_then_ray(lambda: left.join(right, on="k", how=how))
    assert _rows(on_cluster) == _rows(native)
    kinds = [(s.kind, s.tasks) for s in on_ray.last_stages]
    if how in ("right", "outer"):  # unmatched right rows must be found once: shuffled
        assert kinds == [("shuffle map", 5), ("shuffle map", 3), ("reduce", 5)]
    else:
        assert kinds == [("broadcast", 3), ("map", 5)], kinds
        assert "broadcast Join" in on_ray.last_stages[1].name
    native, on_cluster = native_then_ray(build)
    assert _rows(on_cluster) == _rows(native)


def test_repartition_by_key_puts_every_key_in_one_partition_like_the_native_runner(on_ray, tmp_path):
    data = _data()
    native, on_cluster = native_then_ray(lambda: data.repartition(4, "s", "g"))
    ray_parts = [p.to_pydict() for p in on_cluster.iter_partitions()]
    native_parts = [p.to_pydict() for p in native.iter_partitions()]
    assert len(ray_parts) == 4
    # The same hash on both runners: each partition holds the same multiset of rows.
    for mine, theirs in zip(ray_parts, native_parts, strict=True):
        assert sorted(mine["id"]) == sorted(theirs["id"])
    owner: dict[Any, int] = {}
    for p, part in enumerate(ray_parts):
        for key in zip(part["s"], part["g"], strict=True):
            assert owner.setdefault(key, p) == p
    assert sorted(i for part in ray_parts for i in part["id"]) == list(range(360))
    assert [(s.kind, s.tasks) for s in on_ray.last_stages] == [("shuffle map", 6), ("reduce", 4)]


def test_an_engine_worker_killed_in_the_reduce_stage_still_gives_exact_results(fresh_ray_runner, tmp_path):
    data = _data()
    marker = tmp_path / "killed-once"

    @ketch.func
    def die_once(x: int) -> int:
        if not os.path.exists(marker):
            marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)  # the engine worker running this reduce task
        return x * 2

    def build():
        return data.groupby("s").agg(col("id").sum().alias("t")).with_column("y", die_once(col("t")))

    marker.write_text("native run")
    native, _ = native_then_ray(lambda: build().sort("s"))
    marker.unlink()
    out = build().sort("s").to_pydict()
    assert marker.exists()
    assert out == native.to_pydict()
    reduces = _stage(fresh_ray_runner, "reduce")
    assert reduces and reduces[0].tasks == 6


def test_a_join_on_keys_of_different_types_has_the_native_result(on_ray):
    left, _ = _sides()
    right = ketch.from_arrow(pa.table({"k": pa.array([1, 2, 3, None], pa.int32()), "b": list("wxyz")}))
    native, on_cluster = native_then_ray(lambda: left.join(right, on="k", how="left"))
    assert _rows(on_cluster) == _rows(native)
    assert not _stage(on_ray, "shuffle map")  # int64 vs int32 keys may hash apart: no shuffle
