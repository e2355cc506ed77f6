"""The Ray runner on a real 3-node local cluster: the same results as the native runner (order
kept where the native runner keeps it), the map stage spread over every node, errors naming the
stage and partition, an engine worker killed mid-query, an unreachable address."""

from __future__ import annotations

import io
import os
import signal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ketch
from ketch import col


def _both(build) -> tuple[dict, dict]:
    """The query's result on the native runner, then on the Ray runner (already set)."""
    from ketch.runners import get_runner

    ray_runner = get_runner()
    ketch.set_runner_native()
    native = build().to_pydict()
    ketch.runners._runner = ray_runner
    return native, build().to_pydict()


def _files(tmp_path, n_files=6, rows=50) -> str:
    for f in range(n_files):
        start = f * rows
        pq.write_table(
            pa.table(
                {"id": list(range(start, start + rows)), "g": [i % 5 for i in range(start, start + rows)]}
            ),
            tmp_path / f"part-{f:02d}.parquet",
        )
    return str(tmp_path / "*.parquet")


def test_map_stages_and_driver_tails_give_the_native_runners_results(on_ray, tmp_path):
    glob = _files(tmp_path)

    @ketch.func
    def triple(x: int) -> int:
        return 3 * x

    queries = {
        "map only, order kept": lambda: (
            ketch.read_parquet(glob).where(col("g") != 2).with_column("t", triple(col("id")))
        ),
        "groupby": lambda: ketch.read_parquet(glob).groupby("g").agg(col("id").sum()).sort("g"),
        "sort desc": lambda: ketch.read_parquet(glob).sort("id", desc=True).limit(7),
        "join": lambda: (
            ketch.read_parquet(glob)
            .join(ketch.from_pydict({"g": [0, 1, 2], "name": ["a", "b", "c"]}), on="g")
            .sort("id")
        ),
        "in-memory partitions": lambda: (
            ketch.from_pydict({"x": list(range(40))}).into_partitions(5).with_column("y", triple(col("x")))
        ),
        "explode": lambda: ketch.from_pydict({"l": [[1, 2], [], [3]]}).explode("l"),
    }
    for name, build in queries.items():
        native, on_cluster = _both(build)
        assert on_cluster == native, name


def test_partitions_survive_and_stream_in_order(on_ray):
    df = ketch.from_pydict({"x": list(range(30))}).into_partitions(4).with_column("y", col("x") + 1)
    parts = [p.to_pydict()["x"] for p in df.iter_partitions()]
    assert [len(p) for p in parts] == [8, 8, 7, 7]
    assert [x for p in parts for x in p] == list(range(30))
    assert df.collect().num_partitions() == 4


def test_one_small_file_under_an_expensive_udf_spreads_over_every_node(on_ray, tmp_path):
    pq.write_table(
        pa.table({"url": [f"http://example.invalid/{i}" for i in range(4000)]}), tmp_path / "urls.parquet"
    )

    @ketch.func
    def expensive(url: str) -> int:
        return len(url)

    df = ketch.read_parquet(str(tmp_path / "urls.parquet")).with_column("n", expensive(col("url")))
    out = df.to_pydict()
    assert out["n"] == [len(f"http://example.invalid/{i}") for i in range(4000)]
    assert len(on_ray.last_tasks_per_node) == 3, on_ray.last_tasks_per_node


def test_a_split_row_group_is_read_once_per_query_and_its_ranges_spread_over_the_workers(on_ray, tmp_path):
    n = 60_000
    urls = [f"http://example.invalid/{i}" for i in range(n)]
    pq.write_table(pa.table({"url": urls}), tmp_path / "one.parquet", row_group_size=n)

    @ketch.func
    def expensive(url: str) -> int:
        return len(url)

    workers = len([w for w in on_ray.workers() if w.alive])
    with ketch.execution_config_ctx(num_compute_threads=4):
        df = ketch.read_parquet(str(tmp_path / "one.parquet")).with_column("n", expensive(col("url")))
        stats = df.explain_analyze(file=io.StringIO())
        out = df.to_pydict()
    ranges = stats.scan["scan_tasks"]
    assert ranges >= 8 > workers
    # Ranges cut into one run per engine worker, every worker computing one, and the row group
    # read once for the query by a read task whose tables the runs share (split_reads.py), as the
    # native runner reads it once (it used to be read once per worker, and before that per range).
    assert stats.scan["row_groups_read"] == 1
    assert stats.scan["rows_read"] == n
    (stage,) = on_ray.last_stages
    assert stage.tasks == workers and len(stage.tasks_per_node) == workers, stage.tasks_per_node
    assert stage.shared_reads == 1 and stage.rows_out == n
    assert out["n"] == [len(u) for u in urls]


def test_a_failing_task_raises_the_original_error_naming_stage_and_partition(on_ray):
    @ketch.func
    def boom(x: int) -> int:
        if x == 17:
            raise ValueError("bad row 17")
        return x

    # Materialized partitions: the UDF runs in the map stage, one task per partition, on the workers.
    df = (
        ketch.from_pydict({"x": list(range(30))})
        .into_partitions(3)
        .collect()
        .with_column("y", boom(col("x")))
    )
    with pytest.raises(ketch.errors.KetchError, match=r"(?s)bad row 17.*stage 1 .*partition 1 of 3"):
        df.collect()
    # The tasks the failed query gave up on no longer count against the workers' backlogs (the
    # slots outlive the query): the next query has every worker's full backlog.
    assert [w.in_flight for w in on_ray.workers() if w.alive] == [0, 0, 0]
    assert df.with_column("y", col("x") * 2).to_pydict()["y"] == [2 * x for x in range(30)]


def test_a_failed_or_stopped_query_leaves_no_task_counted_against_the_workers(fresh_ray_runner):
    """A runner's worker slots outlive its queries: the tasks a failed or a stopped query leaves
    running (a running actor task cannot be cancelled) count against their workers' backlog only
    until they end (WorkerSlot.busy), so every worker takes the next query's tasks."""

    @ketch.func
    def boom(x: int) -> int:
        if x == 0:
            raise ValueError("bad row 0")
        return x

    df = ketch.from_pydict({"x": list(range(300))}).into_partitions(30).collect()
    with pytest.raises(ketch.errors.KetchError, match="bad row 0"):
        df.with_column("y", boom(col("x"))).collect()
    assert [slot.in_flight for slot in fresh_ray_runner.workers()] == [0, 0, 0]
    parts = df.with_column("y", col("x") + 1).iter_partitions()
    assert next(parts).to_pydict()["y"] == list(range(1, 11))
    parts.close()  # the consumer stops after the first partition
    assert [slot.in_flight for slot in fresh_ray_runner.workers()] == [0, 0, 0]
    # The stopped stream's tasks may still run (uncancellable): they count until they end. Once
    # they have ended, no worker is busy and the next query spreads over every node.
    import ray

    for slot in fresh_ray_runner.workers():
        ray.wait(slot.abandoned, num_returns=len(slot.abandoned), timeout=60, fetch_local=False)
    assert [slot.busy() for slot in fresh_ray_runner.workers()] == [0, 0, 0]
    out = df.with_column("y", col("x") * 2).to_pydict()
    assert out["y"] == [2 * x for x in range(300)]
    assert len(fresh_ray_runner.last_tasks_per_node) == 3, fresh_ray_runner.last_tasks_per_node


def test_an_engine_worker_killed_mid_query_is_replaced_and_nothing_is_lost_or_doubled(
    fresh_ray_runner, tmp_path
):
    marker = tmp_path / "killed-once"

    @ketch.func
    def die_once(x: int) -> int:
        if x == 25 and not os.path.exists(marker):
            marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)  # the engine worker process itself
        return x * 2

    df = (
        ketch.from_pydict({"x": list(range(60))})
        .into_partitions(6)
        .collect()
        .with_column("y", die_once(col("x")))
    )
    out = df.to_pydict()
    assert marker.exists()
    assert out == {"x": list(range(60)), "y": [2 * x for x in range(60)]}


def test_an_unreachable_address_fails_fast_naming_it(ray_cluster):
    with pytest.raises(ConnectionError, match=r"127\.0\.0\.1:1"):
        ketch.set_runner_ray(address="127.0.0.1:1")


def _wait_until_dead(handles: list, timeout_s: float = 60.0) -> None:
    """Returns once Ray's actor table (GCS) lists every actor of ``handles`` as DEAD (``ray.kill``
    is asynchronous: a call sent right after it may still be answered); AssertionError naming
    the states after ``timeout_s``."""
    import time

    from ray._private.state import actors

    deadline = time.monotonic() + timeout_s
    while True:
        states = [actors(handle._actor_id.hex())["State"] for handle in handles]
        if all(state == "DEAD" for state in states):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"not all dead {timeout_s} s after ray.kill: {states}")
        time.sleep(0.1)


def test_shutdown_kills_the_engine_workers_and_the_runner_starts_new_ones_after(ray_cluster):
    import ray

    from ketch.runners.ray.runner import RayRunner

    runner = RayRunner(address=ray_cluster.address)
    try:
        first = list(runner.workers())
        assert len(first) == 3
        pids = {ray.get(slot.handle.info.remote())["pid"] for slot in first}
        runner.shutdown()
        runner.shutdown()  # a second call finds nothing to kill
        assert not any(slot.alive for slot in first)
        _wait_until_dead([slot.handle for slot in first])
        ketch.runners._runner = runner
        out = ketch.from_pydict({"x": list(range(30))}).into_partitions(3).with_column("y", col("x") * 2)
        assert out.to_pydict() == {"x": list(range(30)), "y": [2 * x for x in range(30)]}
        again = runner.workers()
        assert len(again) == 3 and not pids & {ray.get(s.handle.info.remote())["pid"] for s in again}
    finally:
        ketch.set_runner_native()
        runner.shutdown()


def test_the_shared_runner_puts_options_back_and_is_retired_when_a_worker_died(
    ray_cluster, shared_ray_runner
):
    """The conftest's lending (``SharedRayRunner.lend``) on an instance of this test's own: options
    a test changed are restored; a runner one of whose engine workers died is never lent again."""
    import ray

    from ketch.runners import get_runner

    shared = type(shared_ray_runner)(ray_cluster.address)
    try:
        lending = shared.lend("first")
        runner = next(lending)
        assert get_runner() is runner
        defaults = (runner.max_shuffle_partitions, runner.broadcast_join_size_bytes_threshold)
        runner.max_shuffle_partitions, runner.broadcast_join_size_bytes_threshold = 3, -1
        with pytest.raises(StopIteration):
            next(lending)
        assert (runner.max_shuffle_partitions, runner.broadcast_join_size_bytes_threshold) == defaults
        assert shared.retired == 0 and get_runner() is not runner

        lending = shared.lend("second")
        assert next(lending) is runner  # the same runner, its workers not started again
        slots = list(runner.workers())
        ray.kill(slots[0].handle, no_restart=True)
        _wait_until_dead([slots[0].handle])
        with pytest.warns(UserWarning, match="second left the shared Ray runner with 1 dead"):
            with pytest.raises(StopIteration):
                next(lending)
        assert shared.retired == 1
        _wait_until_dead([slot.handle for slot in slots[1:]])  # the retired runner's other workers

        lending = shared.lend("third")
        assert next(lending) is not runner
        with pytest.raises(StopIteration):
            next(lending)
    finally:
        shared.shutdown()
