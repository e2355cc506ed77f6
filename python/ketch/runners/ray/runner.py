"""The Ray runner: the same optimized plan as the native runner, cut into stages.

Stage 1 (the map stage) is the partition-local part of the plan above its first source: the
source and the streaming operators over it (projections with UDFs and multimodal kernels,
filters, explodes, samples). It runs as one task per input partition (scan task, in-memory
partition) on the engine workers, one actor per node, each running the fragment on the native
executor. What lies above (aggregations, sorts, joins, repartitions, limits, writes) then runs on
the driver's native executor over the tasks' outputs, partitions in order. Shuffle stages
(partial aggregate -> hash shuffle -> final aggregate, distributed joins and sorts) are not built
yet: those operators run on the driver."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from ketch import _core
from ketch.runners.native import NativeRunner
from ketch.runners.ray.coordinator import Coordinator, StageTasks, WorkerSlot

DEFAULT_TASK_BACKLOG = 2


def _check_reachable(address: str) -> None:
    """ConnectionError naming the address unless something listens there (ray.init would retry
    for a long time before failing)."""
    target = address.split("://", 1)[-1]
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(
            f"set_runner_ray(): address must be 'host:port' or 'ray://host:port', got {address!r}"
        )
    try:
        with socket.create_connection((host, int(port)), timeout=3):
            pass
    except OSError as error:
        raise ConnectionError(f"set_runner_ray(): no Ray cluster answers at {address!r}: {error}") from None


class RayRunner:
    name = "ray"

    def __init__(self, address: str | None = None, max_task_backlog: int | None = None) -> None:
        import ray

        if max_task_backlog is not None and (not isinstance(max_task_backlog, int) or max_task_backlog < 1):
            raise ValueError(f"max_task_backlog must be a positive int, got {max_task_backlog!r}")
        if address is not None and address != "auto":
            _check_reachable(address)
        if not ray.is_initialized():
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
        self.address = address
        self.max_task_backlog = max_task_backlog or DEFAULT_TASK_BACKLOG
        self._actor_class: Any = None
        self._workers: list[WorkerSlot] | None = None
        self.last_tasks_per_node: dict[str, int] = {}

    # -- engine workers ----------------------------------------------------------------------------
    def _start_worker(self, node_id: str) -> Any | None:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from ketch.runners.ray.worker import EngineWorker

        if self._actor_class is None:
            self._actor_class = ray.remote(num_cpus=0, max_restarts=0)(EngineWorker)
        alive = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
        if node_id not in alive:
            return None
        return self._actor_class.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)
        ).remote()

    def workers(self) -> list[WorkerSlot]:
        """One engine worker per alive node (started on first use, replaced when one dies)."""
        import ray

        if self._workers is None or not any(w.alive for w in self._workers):
            slots = []
            for node in ray.nodes():
                if node["Alive"] and node.get("Resources", {}).get("CPU", 0) > 0:
                    handle = self._start_worker(node["NodeID"])
                    if handle is not None:
                        slots.append(WorkerSlot(handle, node["NodeID"]))
            ray.get([s.handle.info.remote() for s in slots])  # ready before tasks flow
            self._workers = slots
        return self._workers

    # -- running -----------------------------------------------------------------------------------
    def _map_stage(self, optimized: _core.PyPlan, config: Any) -> tuple[Any, Iterator[pa.Table], int] | None:
        split = optimized.split_map_stage()
        if split is None:
            return None
        fragment, num_tasks = split
        payloads = [fragment.partition_fragment(i).to_bytes() for i in range(max(1, num_tasks))]
        label = repr(fragment).splitlines()[0].lstrip("* ").split(":")[0]
        stage = StageTasks(f"stage 1 (map: {label})", payloads, config)
        coordinator = Coordinator(self.workers(), self.max_task_backlog, self._start_worker)
        self.last_tasks_per_node = coordinator.tasks_per_node
        return fragment, coordinator.run(stage), len(payloads)

    def execute(
        self, optimized: _core.PyPlan, config: Any, stats: _core.ExecutionStats
    ) -> tuple[pa.Table, list[int]]:
        """Runs an optimized plan on Ray. ``config``: the Python ExecutionConfig."""
        staged = self._map_stage(optimized, config)
        if staged is None:
            return NativeRunner().execute(optimized, config, stats)
        return self._finish(optimized, staged, config, stats)

    def stream(
        self, optimized: _core.PyPlan, config: Any, stats: _core.ExecutionStats
    ) -> Iterator[tuple[list[int], pa.RecordBatchReader]]:
        """The output partition by partition, as ``DataFrame._stream`` reads it: a plan that is all
        map stage streams each task's output as soon as it and the ones before it are done."""
        staged = self._map_stage(optimized, config)
        if staged is not None and optimized.same_plan(staged[0]):
            for partition, table in enumerate(staged[1]):
                batches = table.to_batches() or [pa.RecordBatch.from_pylist([], schema=table.schema)]
                yield [partition] * len(batches), pa.RecordBatchReader.from_batches(table.schema, batches)
            return
        if staged is None:
            table, rows = NativeRunner().execute(optimized, config, stats)
        else:
            table, rows = self._finish(optimized, staged, config, stats)
        offset = 0
        for partition, n in enumerate(rows):
            part = table.slice(offset, n)
            offset += n
            batches = part.to_batches() or [pa.RecordBatch.from_pylist([], schema=table.schema)]
            yield [partition] * len(batches), pa.RecordBatchReader.from_batches(table.schema, batches)

    def _finish(
        self, optimized: _core.PyPlan, staged: Any, config: Any, stats: _core.ExecutionStats
    ) -> tuple[pa.Table, list[int]]:
        """Gathers the map stage's outputs (one partition per task) and runs the rest of the plan
        over them on the driver."""
        fragment, outputs, _n = staged
        tables = list(outputs)
        table = pa.concat_tables(tables)
        rows = [t.num_rows for t in tables]
        if optimized.same_plan(fragment):
            return table, rows
        tail = optimized.replace_subplan(fragment, _core.PyPlan.in_memory(table, rows))
        return NativeRunner().execute(tail, config, stats)

    def __repr__(self) -> str:
        return f"RayRunner(address={self.address!r})"
