"""Stages of one query on Ray: the optimized plan walked from its root, cut at exchanges.

- A source (scan, in-memory data) with the partition-local operators above it (project, filter,
  explode, sample) is one stage: one task per input partition.
- A hash exchange (``PlanHashExchange`` in cpp/ketch/distributed/stage_planner: groupby/agg and
  distinct by their keys, joins whose key types match, ``repartition(n, keys)``) is a shuffle:
  each task of the stage below also hash-partitions its output by the keys into N buckets, left in
  Ray's object store as N objects (map side); then reduce task j runs the node (and the
  partition-local operators above it, up to the next exchange) over bucket j of every map task of
  every input, on an engine worker. Only metadata (rows, bytes) comes back to the driver.
  A repartition's reduce is the bucket itself (its partitions are the buckets, in order).
- Anything else (sort, limit, writes, global aggregates, concat, into_partitions, into_batches,
  random repartition) runs on the driver's native executor over its inputs' partitions, as before;
  when a distributed stage sits above it, its output partitions are put in the object store.

Buckets: ``repartition(n, keys)`` uses n. Otherwise N = the widest input's task count, at most
``max_shuffle_partitions`` (the runner's; default max(8, 2 x the cluster's CPUs)) and at least 1:
a shuffle never makes more partitions than its input had, so small inputs stay few tasks.
Joins (inner, left, semi, anti) broadcast the right side when its bytes, measured by its shuffle
map stage, are at most ``broadcast_join_size_bytes_threshold`` (the runner's; 10 MiB as in
Daft): every task of the left side then joins its partition with the whole right side, and the
left side is not shuffled. Right and outer joins always shuffle both sides.

No partial (pre-shuffle) aggregation yet: map tasks shuffle their rows as they are."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from ketch import _core
from ketch.runners.native import NativeRunner
from ketch.runners.ray.coordinator import Coordinator, StageTasks
from ketch.runners.ray.tables import concat

SOURCES = ("Scan", "InMemorySource")
# Joins that keep no unmatched right rows: the right side can be sent whole to every left task.
BROADCAST_RIGHT = ("inner", "left", "semi", "anti")
DEFAULT_BROADCAST_THRESHOLD = 10 << 20  # bytes, Daft's broadcast_join_size_bytes_threshold


@dataclass
class Pending:
    """Tasks not run yet: ``plan`` over its own source (``split_source``: task i runs
    ``plan.partition_fragment(i)``) and/or placeholder leaves: when ``inputs`` is not empty, task
    i reads ``inputs[i][k]`` (a list of table refs) at leaf k, or the leaf itself where that is
    None (the split source under a broadcast join)."""

    plan: Any
    num_tasks: int
    split_source: bool
    inputs: list[list[list[Any]]] = field(default_factory=list)
    label: str = ""


@dataclass
class StageStats:
    """One stage of the last query: ``tasks`` run, ``rows_out`` and ``bytes_out`` of its outputs
    (for a shuffle map stage, ``bytes_shuffled`` = the bytes it left in the object store for the
    reduce tasks), ``tasks_per_node`` (node id -> tasks), ``buckets`` (0 when not a shuffle map)."""

    name: str
    kind: str  # "map", "shuffle map", "reduce"
    tasks: int = 0
    rows_out: int = 0
    bytes_out: int = 0
    bytes_shuffled: int = 0
    buckets: int = 0
    tasks_per_node: dict[str, int] = field(default_factory=dict)


def _placeholder(plan: Any) -> Any:
    return _core.PyPlan.in_memory(plan.schema().empty_table())


class QueryStages:
    """Runs one optimized plan: ``run()`` yields the output partitions (Arrow tables) in order."""

    def __init__(
        self,
        coordinator: Coordinator,
        config: Any,
        stats: _core.ExecutionStats,
        max_shuffle_partitions: int,
        broadcast_threshold: int = DEFAULT_BROADCAST_THRESHOLD,
    ) -> None:
        self.coordinator = coordinator
        self.config = config
        self.stats = stats
        self.max_shuffle_partitions = max(1, max_shuffle_partitions)
        self.broadcast_threshold = broadcast_threshold
        self.stages: list[StageStats] = []

    # -- the plan walk ----------------------------------------------------------------------------
    def run(self, root: Any) -> Iterator[pa.Table]:
        if self._distributable(root):
            yield from self._final(self._lower(root))
            return
        table, rows = self._on_driver(root)
        offset = 0
        for n in rows:
            yield table.slice(offset, n)
            offset += n

    def _distributable(self, node: Any) -> bool:
        kind = node.kind()
        return kind in SOURCES or node.is_partition_local() or node.hash_exchange() is not None

    def _lower(self, node: Any) -> Pending:
        import ray

        kind = node.kind()
        if kind in SOURCES:
            count, _exact = node.num_partitions()
            return Pending(node, max(1, count), True, label=kind)
        if node.is_partition_local():
            below = self._lower(node.inputs()[0])
            below.plan = node.with_inputs([below.plan])
            below.label = f"{below.label} -> {kind}"
            return below
        exchange = node.hash_exchange()
        if exchange is not None:
            keys, fixed = exchange
            children = [self._lower(child) for child in node.inputs()]
            n = fixed if fixed > 0 else min(max(c.num_tasks for c in children), self.max_shuffle_partitions)
            n = max(1, n)
            if kind == "Join" and node.join_type() in BROADCAST_RIGHT:
                # The right side first: when its shuffled bytes are under the threshold, every task
                # of the left side gets all of it instead (no shuffle of the left side).
                right = self._shuffle(children[1], keys[1], n)
                if self.stages[-1].bytes_shuffled <= self.broadcast_threshold:
                    self.stages[-1].kind = "broadcast"
                    self.stages[-1].name = self.stages[-1].name.replace("shuffle map", "broadcast", 1)
                    return self._broadcast_join(node, children[0], [r for refs in right for r in refs])
                maps = [self._shuffle(children[0], keys[0], n), right]
            else:
                maps = [
                    self._shuffle(child, child_keys, n)
                    for child, child_keys in zip(children, keys, strict=True)
                ]
            if kind == "Repartition":
                template = _placeholder(node)  # the buckets are the partitions
            else:
                template = node.with_inputs([_placeholder(child) for child in node.inputs()])
            inputs = [[[outputs[j] for outputs in side] for side in maps] for j in range(n)]
            return Pending(template, n, False, inputs, label=kind)
        # Stays on the driver; its partitions go to the object store for the stages above it.
        table, rows = self._on_driver(node)
        refs, offset = [], 0
        for r in rows:
            refs.append(ray.put(table.slice(offset, r)))
            offset += r
        return Pending(
            _placeholder(node), len(refs), False, [[[ref]] for ref in refs], label=f"driver {kind}"
        )

    def _broadcast_join(self, node: Any, left: Pending, right_refs: list[Any]) -> Pending:
        """The join as partition-local over ``left``: each of its tasks joins its partition with
        the whole right side (``right_refs``: every right table)."""
        plan = node.with_inputs([left.plan, _placeholder(node.inputs()[1])])
        if left.inputs:
            inputs = [[*task, right_refs] for task in left.inputs]
        else:  # a split source: one leaf, kept
            inputs = [[None, right_refs] for _ in range(left.num_tasks)]
        return Pending(
            plan, left.num_tasks, left.split_source, inputs, label=f"{left.label} -> broadcast Join"
        )

    def _on_driver(self, node: Any) -> tuple[pa.Table, list[int]]:
        """``node`` on the driver's native executor over its inputs' partitions (run on Ray)."""
        inputs = []
        for child in node.inputs():
            tables = list(self._final(self._lower(child)))
            table = concat(tables, child.schema())
            inputs.append(_core.PyPlan.in_memory(table, [t.num_rows for t in tables] or [0]))
        plan = node.with_inputs(inputs) if inputs else node
        return NativeRunner().execute(plan, self.config, self.stats)

    # -- running stages ---------------------------------------------------------------------------
    def _stage(self, pending: Pending, buckets: int, keys: list[str] | None, kind: str) -> Iterator[Any]:
        """Runs ``pending``'s tasks; yields each task's (output refs, metadata) in task order."""
        number = len(self.stages) + 1
        what = f"{pending.label} -> hash shuffle by {keys} into {buckets}" if buckets else pending.label
        stat = StageStats(f"stage {number} ({kind}: {what})", kind, buckets=buckets)
        self.stages.append(stat)
        config = self.config
        shared = None if pending.split_source else pending.plan.to_bytes()

        def submit(handle: Any, index: int) -> tuple[Any, Any]:
            if pending.split_source:
                payload = pending.plan.partition_fragment(index).to_bytes()
            else:
                payload = shared
            inputs = pending.inputs[index] if pending.inputs else None
            refs = handle.run_task.options(num_returns=max(1, buckets) + 1).remote(
                payload, config, inputs, buckets, keys
            )
            return refs[-1], refs[:-1]

        for outputs, meta in self.coordinator.run(StageTasks(stat.name, pending.num_tasks, submit)):
            stat.tasks += 1
            stat.rows_out += sum(meta["rows"])
            stat.bytes_out += sum(meta["bytes"])
            if buckets:
                stat.bytes_shuffled += sum(meta["bytes"])
            stat.tasks_per_node[meta["node_id"]] = stat.tasks_per_node.get(meta["node_id"], 0) + 1
            yield outputs

    def _shuffle(self, pending: Pending, keys: list[str], buckets: int) -> list[list[Any]]:
        """The map side: per task of ``pending``, the refs of its ``buckets`` bucket tables."""
        return list(self._stage(pending, buckets, keys, "shuffle map"))

    def _final(self, pending: Pending) -> Iterator[pa.Table]:
        import ray

        kind = "map" if pending.split_source or pending.label.startswith("driver") else "reduce"
        for outputs in self._stage(pending, 0, None, kind):
            yield ray.get(outputs[0])
