"""Fault tolerance of the Ray runner's engine workers and nodes (the session's 3-node local cluster).

- An engine worker killed in the reduce stage of a shuffled groupby, a shuffled join and a sort:
  its tasks run again on a replacement worker; the map outputs it made stay in its node's object
  store (a worker process dying loses none of them), so nothing is made again.
- A node that joins the cluster gets an engine worker on the next query; removed in the middle of
  a query, its running tasks run elsewhere and the shuffle outputs stored on it are made again by
  running the map tasks that made them once more (lineage.py).
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
from ray_compare import native_then_ray

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


def _wait_for(path: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} did not appear within {timeout_s} s")
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


def _kill_in_reduce(on_ray: Any, tmp_path: Path, build: Callable[[Any], Any]) -> None:
    """``build(udf)`` on both runners, the UDF (run by the reduce tasks) killing one engine worker
    once on Ray: the same rows, and no task run again for a lost output (the killed worker's map
    outputs stayed in its node's object store)."""
    marker = tmp_path / "killed-once"
    udf = _killer(marker)
    marker.write_text("native run")
    native = _native(lambda: build(udf))
    marker.unlink()
    pids_before = {_pid(slot) for slot in on_ray.workers()}
    out = build(udf).collect()
    killed = int(marker.read_text())
    assert killed in pids_before, "the UDF ran outside an engine worker"
    assert _rows(out) == _rows(native)
    last = on_ray.last_stages[-1]
    assert last.kind == "reduce" and "Project" in last.name, on_ray.stage_report()
    # Every node's worker made map outputs (over 100 KiB each, in the object store), the killed
    # one included; none had to be made again.
    maps = on_ray.last_stages[-2]
    assert len(maps.tasks_per_node) == 3, on_ray.stage_report()
    assert maps.buckets and maps.bytes_shuffled / (maps.tasks * maps.buckets) > 100 << 10
    assert on_ray.last_reruns == []
    assert killed not in {_pid(slot) for slot in on_ray.workers()}  # replaced


def test_a_worker_killed_in_a_groupby_reduce_stage(on_ray, tmp_path):
    data = _data(6000, 6)
    on_ray.max_shuffle_partitions = 3

    def build(udf: Any) -> Any:
        return data.groupby("k").agg(col("pad").agg_list().alias("pads")).with_column("k1", udf(col("k")))

    _kill_in_reduce(on_ray, tmp_path, build)


def test_a_worker_killed_in_a_shuffled_join_reduce_stage(on_ray, tmp_path):
    left = _data(6000, 6)
    right = ketch.from_pydict({"k": list(range(10)), "name": [f"n{k}" for k in range(10)]})
    on_ray.broadcast_join_size_bytes_threshold = -1  # shuffle both sides
    on_ray.max_shuffle_partitions = 3

    def build(udf: Any) -> Any:
        return left.join(right, on="k").with_column("id1", udf(col("id")))

    _kill_in_reduce(on_ray, tmp_path, build)


def test_a_worker_killed_in_a_sort_stage(on_ray, tmp_path):
    data = _data(6000, 6)
    on_ray.max_shuffle_partitions = 3

    def build(udf: Any) -> Any:
        return data.sort(["k", "id"], desc=[True, False]).with_column("id1", udf(col("id")))

    marker = tmp_path / "killed-once"
    _kill_in_reduce(on_ray, tmp_path, build)
    # The sort's order too, not just its rows.
    marker.write_text("done")
    out = build(_killer(marker)).collect().to_pydict()
    assert out["id"] == sorted(range(6000), key=lambda i: (-(i % 10), i))
