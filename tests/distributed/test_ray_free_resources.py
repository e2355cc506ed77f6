"""The coordinator spreads tasks by the nodes' free CPUs (a real 3-node local Ray cluster, 1 CPU
per node): a node whose CPU is held by another actor (as an actor pool's UDF actors hold theirs)
gets tasks only after the nodes with an idle CPU, and still its share once they have their
backlog."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ketch
from ketch import col


@pytest.fixture
def busy_node(on_ray: Any) -> Iterator[str]:
    """The node of the runner's first engine worker (the one a tie on tasks in flight picks) with
    its one CPU held by a placeholder actor, once Ray's per-node view shows it taken."""
    import ray
    from ray._private.state import available_resources_per_node
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    node = [w for w in on_ray.workers() if w.alive][0].node_id

    class Placeholder:
        def ready(self) -> bool:
            return True

    holder = (
        ray.remote(num_cpus=1)(Placeholder)
        .options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False))
        .remote()
    )
    try:
        assert ray.get(holder.ready.remote(), timeout=120)
        deadline = time.monotonic() + 60
        while available_resources_per_node().get(node, {}).get("CPU", 0.0) > 0:  # the GCS view lags
            assert time.monotonic() < deadline, available_resources_per_node()
            time.sleep(0.05)
        yield node
    finally:
        ray.kill(holder)


def _files(root: Path, count: int, rows: int = 50) -> pa.Table:
    tables = []
    for k in range(count):
        table = pa.table({"x": pa.array(range(k * rows, (k + 1) * rows), pa.int64())})
        pq.write_table(table, root / f"part-{k:02d}.parquet")
        tables.append(table)
    return pa.concat_tables(tables)


def test_tasks_go_to_the_nodes_with_free_cpus_first(on_ray, busy_node, tmp_path):
    workers = [w for w in on_ray.workers() if w.alive]
    assert len(workers) == 3 and workers[0].node_id == busy_node
    table = _files(tmp_path, 2)
    with ketch.execution_config_ctx(max_sources_per_scan_task=1):  # one task per file
        out = ketch.read_parquet(str(tmp_path)).with_column("y", col("x") * 2).to_pydict()
    assert out == {"x": table.column("x").to_pylist(), "y": [2 * x for x in table.column("x").to_pylist()]}
    (stage,) = on_ray.last_stages
    # Both tasks were placed in one scheduling round: on the two nodes with an idle CPU.
    assert stage.tasks == 2
    assert busy_node not in stage.tasks_per_node, stage.tasks_per_node
    assert sorted(stage.tasks_per_node.values()) == [1, 1]


def test_a_busy_node_still_gets_its_share_when_the_others_are_full(on_ray, busy_node, tmp_path):
    table = _files(tmp_path, 6)
    with ketch.execution_config_ctx(max_sources_per_scan_task=1):
        out = ketch.read_parquet(str(tmp_path)).with_column("y", col("x") * 2).to_pydict()
    assert out["x"] == table.column("x").to_pylist()
    (stage,) = on_ray.last_stages
    # Six tasks, a backlog of two per worker: all placed at once, two on each node.
    assert on_ray.max_task_backlog == 2
    assert stage.tasks == 6 and stage.tasks_per_node.get(busy_node) == 2, stage.tasks_per_node
    assert on_ray.last_stages and len(stage.tasks_per_node) == 3
