"""Fault tolerance of the Ray runner's engine workers and nodes (the session's 3-node local cluster).

- An engine worker killed in the reduce stage of a shuffled groupby, a shuffled join and a sort:
  its tasks run again on a replacement worker; the map outputs it made stay in its node's object
  store (a worker process dying loses none of them), so nothing is made again.
- A node that joins the cluster gets an engine worker on the next query; removed in the middle of
  a query (a groupby, a sort, a pipelined into_partitions), its running tasks run elsewhere and
  the outputs stored on it are made again by running only the tasks that made them once more
  (lineage.py); a random repartition's lost outputs cannot be, so collect() runs the query again.
- A task whose worker dies every time fails the query naming the stage, the partition and nodes.

Every result is exactly the native runner's: no row lost, none doubled. Map outputs here are large
enough (over Ray's 100 KiB inline limit) to live in the nodes' object stores, not the driver's."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ketch
from ketch import col

PAD = 400  # bytes of padding per row: a map task's bucket is then well over 100 KiB


def _data(rows: int, partitions: int) -> Any:
    """``rows`` rows (id, k = id % 10, pad: PAD bytes) in ``partitions`` materialized partitions
    of equal size (one map task each)."""
    return (
        ketch.from_pydict(
            {
                "id": list(range(rows)),
                "k": [i % 10 for i in range(rows)],
                "pad": [f"{i:08d}" + "x" * (PAD - 8) for i in range(rows)],
            }
        )
        .into_partitions(partitions)
        .collect()
    )


def _rows(df: Any) -> list[str]:
    """The rows as a sorted list of reprs (list values sorted too): results without a set order."""
    data = df.to_pydict()
    names = list(data)

    def canonical(value: Any) -> Any:
        return sorted(value, key=repr) if isinstance(value, list) else value

    return sorted(repr(tuple(canonical(data[n][i]) for n in names)) for i in range(len(data[names[0]])))


def _killer(marker: Path) -> Any:
    """A UDF that kills the engine worker running it the first time it runs (``marker`` absent),
    leaving its pid in ``marker``."""

    @ketch.func
    def die_once(x: int) -> int:
        if not os.path.exists(marker):
            marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)  # the engine worker process itself
        return x + 1

    return die_once


def _wait_for(path: Path, timeout_s: float, while_alive: threading.Thread) -> None:
    """Waits for ``path`` to exist (at most ``timeout_s``, and only while ``while_alive`` runs)."""
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if time.monotonic() > deadline or not while_alive.is_alive():
            raise AssertionError(f"{path} did not appear within {timeout_s} s (or the query ended)")
        time.sleep(0.05)


def _native(build: Callable[[], Any]) -> Any:
    """``build()`` collected on the native runner (the Ray runner set again after)."""
    from ketch.runners import get_runner

    ray_runner = get_runner()
    ketch.set_runner_native()
    try:
        return build().collect()
    finally:
        ketch.runners._runner = ray_runner


def _pid(slot: Any) -> int:
    import ray

    return int(ray.get(slot.handle.info.remote())["pid"])


def _kill_in_reduce(ray_runner: Any, tmp_path: Path, build: Callable[[Any], Any]) -> None:
    """``build(udf)`` on both runners, the UDF (run by the reduce tasks) killing one engine worker
    once on Ray: the same rows, and no task run again for a lost output (the killed worker's map
    outputs stayed in its node's object store)."""
    marker = tmp_path / "killed-once"
    udf = _killer(marker)
    marker.write_text("native run")
    native = _native(lambda: build(udf))
    marker.unlink()
    pids_before = {_pid(slot) for slot in ray_runner.workers()}
    out = build(udf).collect()
    killed = int(marker.read_text())
    assert killed in pids_before, "the UDF ran outside an engine worker"
    assert _rows(out) == _rows(native)
    last = ray_runner.last_stages[-1]
    assert last.kind == "reduce" and "Project" in last.name, ray_runner.stage_report()
    # Every node's worker made map outputs (over 100 KiB each, in the object store), the killed
    # one included; none had to be made again.
    maps = ray_runner.last_stages[-2]
    assert len(maps.tasks_per_node) == 3, ray_runner.stage_report()
    assert maps.buckets and maps.bytes_shuffled / (maps.tasks * maps.buckets) > 100 << 10
    assert ray_runner.last_reruns == []
    assert killed not in {_pid(slot) for slot in ray_runner.workers()}  # replaced


def test_a_worker_killed_in_a_groupby_reduce_stage(fresh_ray_runner, tmp_path):
    data = _data(6000, 6)
    fresh_ray_runner.max_shuffle_partitions = 3

    def build(udf: Any) -> Any:
        return data.groupby("k").agg(col("pad").agg_list().alias("pads")).with_column("k1", udf(col("k")))

    _kill_in_reduce(fresh_ray_runner, tmp_path, build)


def test_a_worker_killed_in_a_shuffled_join_reduce_stage(fresh_ray_runner, tmp_path):
    left = _data(6000, 6)
    right = ketch.from_pydict({"k": list(range(10)), "name": [f"n{k}" for k in range(10)]})
    fresh_ray_runner.broadcast_join_size_bytes_threshold = -1  # shuffle both sides
    fresh_ray_runner.max_shuffle_partitions = 3

    def build(udf: Any) -> Any:
        return left.join(right, on="k").with_column("id1", udf(col("id")))

    _kill_in_reduce(fresh_ray_runner, tmp_path, build)


def test_a_worker_killed_in_a_sort_stage(fresh_ray_runner, tmp_path):
    data = _data(6000, 6)
    fresh_ray_runner.max_shuffle_partitions = 3

    def build(udf: Any) -> Any:
        return data.sort(["k", "id"], desc=[True, False]).with_column("id1", udf(col("id")))

    marker = tmp_path / "killed-once"
    _kill_in_reduce(fresh_ray_runner, tmp_path, build)
    # The sort's order too, not just its rows.
    marker.write_text("done")
    out = build(_killer(marker)).collect().to_pydict()
    assert out["id"] == sorted(range(6000), key=lambda i: (-(i % 10), i))


def _remove_a_node_mid_query(
    ray_runner: Any, ray_cluster: Any, tmp_path: Path, build: Callable[[Any], Any], task_rows: int
) -> tuple[Any, Any, str]:
    """Adds a 4th node (the runner must start an engine worker there), then runs ``build(tag)`` on
    both runners; on Ray, the UDF ``tag`` (over the column "id", in a stage whose task i holds the
    ids [i x task_rows, (i + 1) x task_rows)) lets the new node's first task of that stage finish
    (its outputs stay in that node's object store), holds its second one, and the test removes
    the node then. Returns (native result, Ray result, the removed node's id); the cluster
    has its 3 nodes again after."""
    import ray

    before = {slot.node_id for slot in ray_runner.workers()}
    first, held, release = tmp_path / "first", tmp_path / "held", tmp_path / "release"
    node = ray_cluster.add_node(num_cpus=1, object_store_memory=256 << 20)
    try:
        ray_cluster.wait_for_nodes()
        slots = ray_runner.workers()  # the node that joined gets an engine worker
        added = [slot for slot in slots if slot.node_id not in before]
        assert len(slots) == 4 and len(added) == 1
        new_node, new_pid = added[0].node_id, _pid(added[0])

        @ketch.func
        def tag(x: int) -> int:
            if os.getpid() == new_pid:  # the new node's engine worker
                part = x // task_rows  # the task's index: its ids are a block of task_rows
                if not first.exists():
                    first.write_text(str(part))
                elif int(first.read_text()) != part:  # its first task is done: hold this one
                    held.write_text(str(part))
                    deadline = time.monotonic() + 120
                    while not release.exists() and time.monotonic() < deadline:
                        time.sleep(0.05)
            return x % 7

        native = _native(lambda: build(tag))
        result: dict[str, Any] = {}

        def run() -> None:
            try:
                result["out"] = build(tag).collect()
            except BaseException as error:  # noqa: BLE001 - re-raised on the test thread
                result["error"] = error

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        _wait_for(held, timeout_s=180, while_alive=thread)
        ray_cluster.remove_node(node)
        node = None
        thread.join(timeout=300)
        assert not thread.is_alive(), "the query did not finish after the node was removed"
        if "error" in result:
            raise result["error"]
    finally:
        release.write_text("")
        if node is not None:
            ray_cluster.remove_node(node)
    assert sum(1 for n in ray.nodes() if n["Alive"]) == 3  # the shared cluster as it was
    assert {slot.node_id for slot in ray_runner.workers()} == before
    return native, result["out"], new_node


def test_a_node_removed_mid_groupby_has_its_lost_map_outputs_made_again(
    fresh_ray_runner, ray_cluster, tmp_path
):
    rows, parts = 12000, 12
    data = _data(rows, parts)
    fresh_ray_runner.max_shuffle_partitions = 3  # buckets of about 160 KiB: in the nodes' object stores

    def build(tag: Any) -> Any:
        return (
            data.with_column("t", tag(col("id")))
            .groupby("k")
            .agg(col("pad").agg_list().alias("pads"), col("t").sum().alias("t"))
        )

    native, out, removed = _remove_a_node_mid_query(
        fresh_ray_runner, ray_cluster, tmp_path, build, rows // parts
    )
    assert _rows(out) == _rows(native)
    maps = fresh_ray_runner.last_stages[0]
    assert maps.kind == "shuffle map" and maps.tasks == parts, fresh_ray_runner.stage_report()
    assert maps.tasks_per_node.get(removed) == 1, fresh_ray_runner.stage_report()
    # Only the map task whose outputs were lost ran again (not the whole query).
    reruns = fresh_ray_runner.last_reruns
    lost_part = (tmp_path / "first").read_text()
    assert len(reruns) == 1 and reruns[0].startswith(f"{maps.name}, partition {lost_part} "), reruns
    # The next query runs on the 3 nodes left.
    counts = data.groupby("k").agg(col("id").count().alias("n")).to_pydict()
    assert sorted(counts["n"]) == [rows // 10] * 10
    assert set(fresh_ray_runner.last_tasks_per_node) == {slot.node_id for slot in fresh_ray_runner.workers()}


def test_a_node_removed_mid_sort_has_its_lost_sample_outputs_made_again(
    fresh_ray_runner, ray_cluster, tmp_path
):
    rows, parts = 12000, 12
    data = _data(rows, parts)
    fresh_ray_runner.max_shuffle_partitions = 3

    def build(tag: Any) -> Any:
        return data.with_column("t", tag(col("id"))).sort(["k", "id"], desc=[True, False])

    native, out, removed = _remove_a_node_mid_query(
        fresh_ray_runner, ray_cluster, tmp_path, build, rows // parts
    )
    assert out.to_pydict() == native.to_pydict()  # the same rows in the same order
    sample = fresh_ray_runner.last_stages[0]
    assert sample.kind == "sample" and sample.tasks_per_node.get(removed) == 1, (
        fresh_ray_runner.stage_report()
    )
    assert len(fresh_ray_runner.last_reruns) == 1 and fresh_ray_runner.last_reruns[0].startswith(sample.name)


def test_a_node_removed_mid_random_repartition_reruns_the_whole_query(
    fresh_ray_runner, ray_cluster, tmp_path, caplog
):
    rows, parts = 12000, 12
    data = _data(rows, parts)

    def build(tag: Any) -> Any:
        # A random shuffle's map task spreads its rows differently when run again: its lost
        # outputs cannot be made again alone, so the whole query runs again (once).
        return data.with_column("t", tag(col("id"))).repartition(3).with_column("u", col("t") + 1)

    with caplog.at_level("WARNING", logger="ketch.runners.ray.runner"):
        native, out, _removed = _remove_a_node_mid_query(
            fresh_ray_runner, ray_cluster, tmp_path, build, rows // parts
        )
    assert _rows(out) == _rows(native)
    assert any("running the whole query again" in r.getMessage() for r in caplog.records), caplog.text
    assert "random shuffle" in caplog.text
    assert fresh_ray_runner.last_reruns == []


def test_a_task_whose_worker_dies_every_time_fails_naming_stage_partition_and_nodes(fresh_ray_runner):
    from ketch.runners.ray.coordinator import StageFailed

    fresh_ray_runner.max_task_attempts = 2
    nodes = {slot.node_id for slot in fresh_ray_runner.workers()}

    @ketch.func
    def always_dies(x: int) -> int:
        if x == 25:
            os.kill(os.getpid(), signal.SIGKILL)
        return x

    df = ketch.from_pydict({"x": list(range(60))}).into_partitions(6).collect()
    with pytest.raises(StageFailed) as failure:
        df.with_column("y", always_dies(col("x"))).collect()
    message = str(failure.value)
    assert "stage 1 (map: InMemorySource -> Project)" in message, message
    assert "partition 2 of 6" in message and "failed 2 times" in message, message
    died_on = message.split("died on node(s) ")[1].split(", ")
    assert len(died_on) == 2 and set(died_on) <= nodes, message
    # The dead workers were replaced: the next query runs on every node.
    assert df.with_column("y", col("x") + 1).to_pydict()["y"] == list(range(1, 61))
    assert set(fresh_ray_runner.last_tasks_per_node) == nodes


def test_a_node_removed_mid_pipelined_stage_gives_every_row_once_in_order(
    fresh_ray_runner, ray_cluster, tmp_path
):
    rows = 12000
    data = _data(rows, 12)

    def build(tag: Any) -> Any:
        # Stage 2 (into_partitions(24) -> Project) runs pipelined behind stage 1 (12 tasks): the
        # lost outputs may be stage 1's (inputs of stage 2's tasks not run yet) and stage 2's own
        # (read by the driver), whose task then reads stage 1's outputs made again.
        return data.with_column("t", col("id") + 1).into_partitions(24).with_column("u", tag(col("id")))

    native, out, _removed = _remove_a_node_mid_query(
        fresh_ray_runner, ray_cluster, tmp_path, build, rows // 24
    )
    assert out.to_pydict() == native.to_pydict()
    assert [len(p.to_pydict()["id"]) for p in out.iter_partitions()] == [rows // 24] * 24
    names = [stage.name for stage in fresh_ray_runner.last_stages]
    assert all(rerun.split(", partition")[0] in names for rerun in fresh_ray_runner.last_reruns), (
        fresh_ray_runner.last_reruns
    )
