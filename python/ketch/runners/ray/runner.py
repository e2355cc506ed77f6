"""The Ray runner: the same optimized plan as the native runner, cut into stages.

Each source with the partition-local operators over it (projections with UDFs and multimodal
kernels, filters, explodes, samples) is a stage of one task per input partition (scan task,
in-memory partition) on the engine workers, one actor per node, each running its fragment on the
native executor. Hash exchanges (groupby/agg, distinct, joins, repartition(n, keys)) are shuffles:
map tasks hash-partition their output into buckets in Ray's object store, reduce tasks run the
operator bucket by bucket on the workers (stages.py); a small right side of a join is broadcast
to the left side's tasks instead. Sorts are range-partitioned from a sample of their keys and
sorted range by range on the workers (sort_stage.py). Limits run in two phases,
into_partitions/into_batches and concat cut or chain the ordered task outputs, writes are staged
per task and committed when all succeeded. Global aggregates still run on the driver's native
executor over their inputs' partitions. With ``shuffle_algorithm="flight_shuffle"`` the hash and
random shuffles' buckets stay on the map tasks' local disks, served over Arrow Flight by each
engine worker (flight_shuffle.py). ``last_stages`` keeps the last query's stages (tasks,
rows, bytes shuffled).

Faults: each query checks the cluster's nodes first (a node that joined gets an engine worker, one
that left loses its slot). A worker that dies mid-query has its tasks run again elsewhere (up to
``max_task_attempts`` runs per task, then StageFailed naming the stage, the partition and the
nodes); a node that leaves mid-query also loses the task outputs stored there, which are made
again by running the tasks that made them (lineage.py; ``last_reruns`` lists them). ``collect()``
runs the whole query once more, with a warning, when a lost output cannot be made again alone
(a random shuffle's); a streamed query fails with ``OutputsLost`` then."""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from ketch import _core
from ketch.runners.ray.coordinator import Coordinator, WorkerSlot
from ketch.runners.ray.lineage import OutputsLost
from ketch.runners.ray.stage_tasks import StageStats
from ketch.runners.ray.stages import DEFAULT_BROADCAST_THRESHOLD, QueryStages
from ketch.runners.ray.tables import concat, register_serializer

DEFAULT_TASK_BACKLOG = 2
DEFAULT_TASK_ATTEMPTS = 4

log = logging.getLogger(__name__)


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


@contextlib.contextmanager
def _actor_pools(optimized: _core.PyPlan, config: Any, warm: Any) -> Iterator[None]:
    """The query's actor-pool UDFs started (or taken over from ``warm``, the runner's idle pools)
    and ready inside; after a success they go back to ``warm`` for ``actor_udf_idle_timeout``
    seconds, after a failure or cancel their actors are killed (actor_pool.py)."""
    from ketch.runners.ray.actor_pool import ActorPools

    pools = ActorPools(
        optimized,
        float(getattr(config, "actor_udf_ready_timeout", 120)),
        warm,
        float(getattr(config, "actor_udf_idle_timeout", 0)),
    )
    if not pools:
        yield
        return
    succeeded = False
    try:
        pools.start()
        yield
        succeeded = True
    finally:
        pools.stop(succeeded)


class RayRunner:
    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        max_task_backlog: int | None = None,
        max_shuffle_partitions: int | None = None,
        broadcast_join_size_bytes_threshold: int = DEFAULT_BROADCAST_THRESHOLD,
        max_task_attempts: int = DEFAULT_TASK_ATTEMPTS,
    ) -> None:
        import ray

        if max_shuffle_partitions is not None and (
            not isinstance(max_shuffle_partitions, int) or max_shuffle_partitions < 1
        ):
            raise ValueError(f"max_shuffle_partitions must be a positive int, got {max_shuffle_partitions!r}")
        if max_task_backlog is not None and (not isinstance(max_task_backlog, int) or max_task_backlog < 1):
            raise ValueError(f"max_task_backlog must be a positive int, got {max_task_backlog!r}")
        if not isinstance(max_task_attempts, int) or max_task_attempts < 1:
            raise ValueError(f"max_task_attempts must be a positive int, got {max_task_attempts!r}")
        if address is not None and address != "auto":
            _check_reachable(address)
        if not ray.is_initialized():
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
        register_serializer()  # tables without columns keep their rows (count_rows)
        self.address = address
        from ketch.runners.ray.actor_pool import WarmPools

        # Actor pools of earlier queries, idle, for the next query with the same UDF.
        self.warm_pools = WarmPools()
        self.max_task_backlog = max_task_backlog or DEFAULT_TASK_BACKLOG
        self._actor_class: Any = None
        self._workers: list[WorkerSlot] | None = None
        self.max_shuffle_partitions = max_shuffle_partitions
        # Joins broadcast a right side of at most this many bytes instead of shuffling both sides.
        self.broadcast_join_size_bytes_threshold = broadcast_join_size_bytes_threshold
        # Runs of one task (its engine worker died, or an input of it was lost) before the query
        # fails naming the stage, the partition and the nodes.
        self.max_task_attempts = max_task_attempts
        self.last_tasks_per_node: dict[str, int] = {}
        # The last query's tasks run again because an output of theirs was lost with its node.
        self.last_reruns: list[str] = []
        # The last query's stages, in the order they ran (name, tasks, rows, bytes shuffled, ...).
        self.last_stages: list[StageStats] = []

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
        """One engine worker per alive node with CPUs, checked at each query: a node that joined
        the cluster since gets one (started now), the slots of nodes that left are dropped. The
        list is updated in place (a running query's coordinator holds it too)."""
        import ray

        if self._workers is None:
            self._workers = []
        nodes = {
            node["NodeID"]
            for node in ray.nodes()
            if node["Alive"] and node.get("Resources", {}).get("CPU", 0) > 0
        }
        self._workers[:] = [slot for slot in self._workers if slot.alive and slot.node_id in nodes]
        covered = {slot.node_id for slot in self._workers}
        started = []
        for node_id in sorted(nodes - covered):
            handle = self._start_worker(node_id)
            if handle is not None:
                started.append(WorkerSlot(handle, node_id))
        ready = []
        for slot in started:  # ready before tasks flow; a node that left meanwhile gets none
            try:
                ray.get(slot.handle.info.remote())
                ready.append(slot)
            except Exception as error:  # noqa: BLE001 - RayActorError, ActorUnschedulableError
                log.warning("ketch: no engine worker on node %s: %s", slot.node_id, error)
        self._workers.extend(ready)
        return self._workers

    def shutdown(self) -> None:
        """Kills this runner's engine workers (``ray.kill``, no restart; replacements started
        for dead ones included) and forgets them; the Ray connection and other runners' workers
        are left alone. The runner stays usable: its next query starts new workers. Call it
        when dropping a runner: Ray keeps an idle actor alive for as long as the cluster runs.
        The idle actor pools kept from earlier queries are stopped too."""
        import ray

        self.warm_pools.close()
        workers, self._workers = self._workers or [], None
        for slot in workers:
            slot.alive = False
            with contextlib.suppress(Exception):  # already dead, or its node left
                ray.kill(slot.handle, no_restart=True)

    # -- planning ----------------------------------------------------------------------------------
    def planning_config(self, config: Any) -> Any:
        """``config`` (the Python ExecutionConfig) for the optimizer on this runner: unless the
        user set ``num_compute_threads``, scan tasks below an expensive pipeline are cut for the
        cluster's CPUs (``ray.cluster_resources()["CPU"]``: every engine worker's share), not for
        the driver's threads, so a cluster larger than the driver gets work on every CPU."""
        import dataclasses

        import ray

        if config.num_compute_threads:
            return config
        cpus = int(ray.cluster_resources().get("CPU", 0))
        return dataclasses.replace(config, num_compute_threads=cpus) if cpus > 0 else config

    def _split_sources(self, optimized: _core.PyPlan, config: Any) -> _core.PyPlan:
        """``optimized`` with each in-memory source below an expensive pipeline (a UDF, a URL
        download, an image kernel) cut into two partitions per CPU (``planning_config``'s count),
        so every engine worker gets a share: ``from_glob_path`` and ``from_pydict`` make one
        partition, which would otherwise run as one task on one node
        (``PyPlan.split_in_memory_sources``)."""
        return optimized.split_in_memory_sources(
            max(1, self.planning_config(config).num_compute_threads or 1)
        )

    # -- running -----------------------------------------------------------------------------------
    def _shuffle_partitions_limit(self) -> int:
        import ray

        limit = self.max_shuffle_partitions
        if limit is None:
            limit = max(8, 2 * int(ray.cluster_resources().get("CPU", 1)))
        return limit

    def _query(self, config: Any, stats: _core.ExecutionStats) -> QueryStages:
        coordinator = Coordinator(
            self.workers(), self.max_task_backlog, self._start_worker, self.max_task_attempts
        )
        self.last_tasks_per_node = coordinator.tasks_per_node
        self.last_reruns = coordinator.lineage.reruns
        limit = self._shuffle_partitions_limit()
        query = QueryStages(
            coordinator,
            config,
            stats,
            limit,
            self.broadcast_join_size_bytes_threshold,
            shuffle_cap=self.max_shuffle_partitions,
        )
        self.last_stages = query.stages
        return query

    def execute(
        self, optimized: _core.PyPlan, config: Any, stats: _core.ExecutionStats
    ) -> tuple[pa.Table, list[int]]:
        """Runs an optimized plan on Ray (``config``: the Python ExecutionConfig); returns the
        result and its rows per partition. When an output the query needs was lost with its
        node and cannot be made again from its lineage (lineage.OutputsLost: a random shuffle's
        output), the whole query runs once more (a warning is logged)."""
        optimized = self._split_sources(optimized, config)
        with _actor_pools(optimized, config, self.warm_pools):
            try:
                tables = list(self._query(config, stats).run(optimized))
            except OutputsLost as error:
                log.warning("ketch: %s; running the whole query again", error)
                tables = list(self._query(config, stats).run(optimized))
        if not tables:
            return optimized.schema().empty_table(), [0]
        return concat(tables, optimized.schema()), [t.num_rows for t in tables]

    def stream(
        self, optimized: _core.PyPlan, config: Any, stats: _core.ExecutionStats
    ) -> Iterator[tuple[list[int], pa.RecordBatchReader]]:
        """The output partition by partition, as ``DataFrame._stream`` reads it: each partition as
        soon as the task that makes it and the ones before it are done."""
        optimized = self._split_sources(optimized, config)
        with _actor_pools(optimized, config, self.warm_pools):
            for partition, table in enumerate(self._query(config, stats).run(optimized)):
                batches = table.to_batches() or [pa.RecordBatch.from_pylist([], schema=table.schema)]
                yield [partition] * len(batches), pa.RecordBatchReader.from_batches(table.schema, batches)

    def describe_plan(self, optimized: _core.PyPlan, config: Any) -> str:
        """The stages ``optimized`` would run as, without running it (explain.py)."""
        import ray

        from ketch.runners.ray.actor_pool import describe_pools
        from ketch.runners.ray.explain import describe

        optimized = self._split_sources(optimized, config)
        text = describe(
            optimized,
            config,
            self._shuffle_partitions_limit(),
            self.broadcast_join_size_bytes_threshold,
            shuffle_cap=self.max_shuffle_partitions,
            workers=sum(1 for node in ray.nodes() if node.get("Alive")),  # one engine worker each
        )
        pools = describe_pools(optimized, ray.cluster_resources().get("GPU", 0.0))
        return "\n".join([text, *pools]) if pools else text

    def stage_report(self) -> str:
        """The last query's stages, one line each: tasks, seconds, rows out, MB out, MB shuffled,
        tasks per node (explain_analyze prints it)."""
        lines = []
        for stage in self.last_stages:
            nodes = ", ".join(f"{node[:8]}: {n}" for node, n in sorted(stage.tasks_per_node.items()))
            disk = f" ({stage.bytes_on_disk / 1e6:.2f} MB on disk)" if stage.bytes_on_disk else ""
            if stage.shared_reads:
                disk += f", {stage.shared_reads} split row group(s) read once and shared"
            lines.append(
                f"{stage.name}: {stage.tasks} tasks, {stage.seconds:.2f} s, {stage.rows_out} rows out, "
                f"{stage.bytes_out / 1e6:.2f} MB out, {stage.bytes_shuffled / 1e6:.2f} MB shuffled{disk}, "
                f"tasks per node {{{nodes}}}"
            )
        lines += [f"run again (its output was lost): {rerun}" for rerun in self.last_reruns]
        return "\n".join(lines) or "(no stages: the query ran on the driver)"

    def close_actor_pools(self) -> int:
        """Stops the idle actor pools kept from earlier queries; returns how many."""
        return self.warm_pools.close()

    def __repr__(self) -> str:
        return f"RayRunner(address={self.address!r})"
