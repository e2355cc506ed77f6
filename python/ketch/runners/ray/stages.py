"""Stages of one query on Ray: the optimized plan walked from its root, cut at exchanges.

- A source (scan, in-memory data) with the partition-local operators above it (project, filter,
  explode, sample) is one stage: one task per input partition, except for the row ranges of a
  split Parquet row group (a large row group below an expensive pipeline): they are cut into at
  most one run of consecutive ranges per engine worker (``split_reads.plan_shares``), so every
  node gets a share of the expensive pipeline, and each run is one task over its ranges' tables,
  which one read task per row group made reading it once (split_reads.py); the runs start as
  soon as their row group's read is done. A split source whose outputs are cut by
  into_partitions / into_batches while it runs (the upstream lane of a pipelined stage) has no
  read tasks: each of its runs reads the row group itself.
- A hash exchange (``PlanHashExchange`` in cpp/ketch/distributed/stage_planner: groupby/agg and
  distinct by their keys, joins, ``repartition(n, keys)``; exchange.py) is a shuffle:
  each task of the stage below also hash-partitions its output by the keys into N buckets, left in
  Ray's object store as N objects (map side); then reduce task j runs the node (and the
  partition-local operators above it, up to the next exchange) over bucket j of every map task of
  every input, on an engine worker. Only metadata (rows, bytes) comes back to the driver.
  A repartition's reduce is the bucket itself (its partitions are the buckets, in order).
- Order-keeping operators need no shuffle (``_lower_ordered``): a limit runs in each task of the
  stage below, then the coordinator keeps the first rows in task order and stops the tasks it no
  longer needs; into_partitions and into_batches are row-range cuts of the stage's ordered outputs
  (slicing.py), read by the tasks above as slices of the objects, never through the driver; concat
  is the left side's partitions then the right side's; the writers write each task's files into
  a staging location and commit them only when every task succeeded (ketch/io/write_commit.py).
- ``repartition(n)`` without keys is a shuffle too: map tasks spread their rows evenly over n
  buckets (round-robin from a random start per morsel), and the buckets are the partitions.
- A sort is a sample stage, a range shuffle and a sort per range on the workers; a small limit
  over a sort a top-k (sort_stage.py).
- Anything else (single-phase global aggregates) runs on the driver's native executor over its
  inputs' partitions, as before; when a distributed stage sits above it, its output partitions
  are put in the object store.

Each stage draws a tqdm bar of its tasks on a terminal (progress.py).

``QueryStages`` (this module: lowering the plan into stages) has its other parts in mixins, by
concern: stage_tasks.py (running a stage's tasks, stage statistics), shuffle_object_store.py and
shuffle_flight.py (one per shuffle algorithm), stage_results.py (gathering and streaming
results) and recovery.py (lost workers, beside lineage.py).

Buckets (exchange.py, Daft's rule): ``repartition(n, keys)`` uses n; a join the widest input's
task count; an aggregation or window its input's, at most ``shuffle_aggregation_default_partitions``
(200); all at most the runner's ``max_shuffle_partitions`` when the user set it. A shuffle never
makes more partitions than its input had, so small inputs stay few tasks.
Joins (inner, left, semi, anti) broadcast the right side when its bytes, measured by its shuffle
map stage, are at most ``broadcast_join_size_bytes_threshold`` (the runner's; 10 MiB as in
Daft), or always with ``strategy="broadcast"``: every task of the left side then joins its
partition with the whole right side, and the left side is not shuffled. A right join with
``strategy="broadcast"`` sends the whole left side to one task per right partition instead.
Other right and outer joins, and joins with ``strategy="hash"`` or ``"sort_merge"``, shuffle both
sides. DataFrame.join casts
keys of different types to their supertype when it builds the plan; a join built otherwise
with keys of different types is shuffled on hidden columns holding its keys cast to the type
the join compares them in (exchange.py). A cross join runs both sides, then broadcasts the one
with fewer rows to one task per partition of the other (``_cross_join``).

Aggregations with mergeable states (sum, count, mean, min, max, any_value) run in two phases:
each map task aggregates its own partition into partial states (one row per group), those are
hash-shuffled by the group keys, and reduce task j merges and finishes bucket j (Daft's and
Spark's partial -> final aggregation): the shuffle moves one row per group per map task instead
of every row. A global aggregate (no keys) is a partial aggregate per task and one final task.
Aggregations that collect values (list, concat, approx_count_distinct, stddev) shuffle raw rows.

With ``shuffle_algorithm="flight_shuffle"`` the hash and random shuffles keep their buckets on
the map tasks' local disks instead of the object store, served by each engine worker's Arrow
Flight server (flight_shuffle.py); the reduce tasks' inputs are then (address, ticket) pieces,
and the query's shuffle files are deleted when ``run()`` ends (success, failure or cancel). The
range shuffle of a sort still goes through the object store."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from ketch import _core
from ketch.runners.native import NativeRunner
from ketch.runners.ray import slicing
from ketch.runners.ray.coordinator import Coordinator
from ketch.runners.ray.exchange import Exchange, exchange_of, shuffle_width
from ketch.runners.ray.flight_shuffle import (
    FlightPiece,
)
from ketch.runners.ray.recovery import Recovery
from ketch.runners.ray.shuffle_flight import FlightShuffle, FlightShuffling
from ketch.runners.ray.shuffle_object_store import ObjectStoreShuffle, _random_repartition
from ketch.runners.ray.sort_stage import DistributedSort, is_distributed_sort
from ketch.runners.ray.split_reads import (
    can_share,
    plan_shares,
)
from ketch.runners.ray.stage_results import StageResults
from ketch.runners.ray.stage_tasks import Feed, Pending, StageRunning, StageStats, _placeholder, spread_runs
from ketch.runners.ray.tables import concat

SOURCES = ("Scan", "InMemorySource")


# Joins that keep no unmatched right rows: the right side can be sent whole to every left task.
BROADCAST_RIGHT = ("inner", "left", "semi", "anti")


DEFAULT_BROADCAST_THRESHOLD = 10 << 20  # bytes, Daft's broadcast_join_size_bytes_threshold


# Order-keeping operators run over their input's tasks without a shuffle (``_lower_ordered``).
FORMAT_NAMES = {"parquet": "Parquet", "csv": "CSV", "json": "JSON"}


ORDERED = ("Limit", "IntoPartitions", "IntoBatches", "Write", "Concat")


class QueryStages(StageRunning, ObjectStoreShuffle, FlightShuffling, Recovery, StageResults):
    """Runs one optimized plan: ``run()`` yields the output partitions (Arrow tables) in order."""

    def __init__(
        self,
        coordinator: Coordinator,
        config: Any,
        stats: _core.ExecutionStats,
        max_shuffle_partitions: int,
        broadcast_threshold: int = DEFAULT_BROADCAST_THRESHOLD,
        shuffle_cap: int | None = None,
    ) -> None:
        self.coordinator = coordinator
        self.config = config
        self.stats = stats
        self.max_shuffle_partitions = max(1, max_shuffle_partitions)  # the sort's ranges
        self.shuffle_cap = shuffle_cap  # the user's max_shuffle_partitions (hash shuffles); None: none
        self.broadcast_threshold = broadcast_threshold
        self.stages: list[StageStats] = []
        self.query_id = uuid.uuid4().hex[:16]  # names the flight shuffle's files and tickets
        self._flight_dirs: list[str] = []  # set when a flight shuffle ran: dropped at the end
        self._flight_shuffles: list[FlightShuffle] = []
        self._relocated: dict[str, FlightPiece] = {}  # first ticket -> the piece made again
        self._lost_addresses: set[str] = set()

    # -- the plan walk ----------------------------------------------------------------------------
    def run(self, root: Any) -> Iterator[pa.Table]:
        try:
            if self._distributable(root):
                yield from self._final(self._lower(root))
                return
            table, rows = self._on_driver(root)
            offset = 0
            for n in rows:
                yield table.slice(offset, n)
                offset += n
        finally:
            self._drop_flight_files()

    def _distributable(self, node: Any) -> bool:
        """Whether ``node`` runs as stages on the workers: sources, partition-local operators,
        hash exchanges, and the order-keeping operators over distributable inputs."""
        kind = node.kind()
        if kind in ORDERED:
            return all(self._distributable(child) for child in node.inputs())
        return (
            kind in SOURCES
            or node.is_partition_local()
            or exchange_of(node) is not None
            or _random_repartition(node)
            or is_distributed_sort(node)
            or node.split_aggregate() is not None
        )

    def _lower(self, node: Any) -> Pending:
        import ray

        kind = node.kind()
        if kind in SOURCES:
            workers = sum(1 for w in self.coordinator.workers if w.alive)
            source_runs = [(int(f), int(c)) for f, c in node.source_task_runs()]
            runs, shared = plan_shares(source_runs, max(1, workers))
            if shared is not None and not can_share(node):
                runs, shared = spread_runs(source_runs, max(1, workers)), None
            return Pending(node, len(runs), True, label=kind, runs=runs, shared=shared)
        if node.is_partition_local():
            below = self._lower(node.inputs()[0])
            below.plan = node.with_inputs([below.plan])
            below.label = f"{below.label} -> {kind}"
            below.slices_only = False
            return below
        if is_distributed_sort(node):
            return DistributedSort(self).lower(node)
        if _random_repartition(node):
            # Map tasks spread their rows evenly over n buckets (round-robin from a random start
            # in each morsel, as the native repartition does); the buckets are the partitions.
            below = self._lower(node.inputs()[0])
            n = node.params()["num_partitions"]
            n = n if n > 0 else max(1, below.partitions)
            side = self._shuffle(below, [], n)
            inputs = [[[outputs[j] for outputs in side]] for j in range(n)]
            return Pending(_placeholder(node), n, False, inputs, label="Repartition (random)")
        two_phase = self._two_phase_aggregate(node)
        if two_phase is not None:
            return two_phase
        if kind == "Join" and node.join_type() == "cross":
            return self._cross_join(node)
        exchange = exchange_of(node)
        if exchange is not None:
            keys = exchange.keys
            children = [self._lower(side) for side in exchange.sides]
            n = shuffle_width(
                node, exchange, max(c.partitions for c in children), self.config, self.shuffle_cap
            )
            strategy = node.join_strategy() if kind == "Join" else ""
            if kind == "Join" and node.join_type() == "right" and strategy == "broadcast":
                return self._broadcast_left_join(node, children[0], children[1], exchange)
            if kind == "Join" and node.join_type() in BROADCAST_RIGHT and strategy in ("", "broadcast"):
                # The right side first: when its shuffled bytes are under the threshold (or the
                # user asked for strategy="broadcast"), every task of the left side gets all of it
                # instead (no shuffle of the left side). "hash"/"sort_merge" always shuffle both.
                right = self._shuffle(children[1], keys[1], n)
                if strategy == "broadcast" or self.stages[-1].bytes_shuffled <= self.broadcast_threshold:
                    self.stages[-1].kind = "broadcast"
                    self.stages[-1].name = self.stages[-1].name.replace("shuffle map", "broadcast", 1)
                    return self._broadcast_join(
                        node, children[0], [r for refs in right for r in refs], exchange
                    )
                maps = [self._shuffle(children[0], keys[0], n), right]
            else:
                maps = [
                    self._shuffle(child, child_keys, n)
                    for child, child_keys in zip(children, keys, strict=True)
                ]
            if kind == "Repartition":
                template = _placeholder(node)  # the buckets are the partitions
            else:
                template = node.with_inputs(
                    [exchange.leaf(i, _placeholder(side)) for i, side in enumerate(exchange.sides)]
                )
            inputs = [[[outputs[j] for outputs in side] for side in maps] for j in range(n)]
            return Pending(template, n, False, inputs, label=kind)
        ordered = self._lower_ordered(node)
        if ordered is not None:
            return ordered
        # Stays on the driver; its partitions go to the object store for the stages above it.
        table, rows = self._on_driver(node)
        refs, offset = [], 0
        for r in rows:
            refs.append(ray.put(table.slice(offset, r)))
            offset += r
        return Pending(
            _placeholder(node), len(refs), False, [[[ref]] for ref in refs], label=f"driver {kind}"
        )

    # -- order-keeping operators without a shuffle: limit, into_partitions, into_batches, writes ---
    def _lower_ordered(self, node: Any) -> Pending | None:
        """Limit (per task, then the first rows in task order), into_partitions and into_batches
        (row-range cuts of the ordered task outputs, slicing.py) and the writers (staged files,
        committed at the end, ketch/io/write_commit.py) over a distributable input; None otherwise."""
        kind = node.kind()
        if kind not in ORDERED:
            return None
        if not all(self._distributable(child) for child in node.inputs()):
            return None
        if kind == "Concat":  # the left side's partitions, then the right side's
            outputs = [out for child in node.inputs() for out in self._gather(self._lower(child))]
            inputs = [[[ref]] for ref, _ in outputs] or [[[]]]
            return Pending(_placeholder(node), len(inputs), False, inputs, label=kind, slices_only=True)
        child = node.inputs()[0]
        below = self._lower(child)
        params = node.params()
        if kind == "Write":
            return self._write(node, below, params)
        if kind == "Limit":
            # Phase 1: each task stops at offset + limit rows (its own first rows: the offset
            # counts rows of the whole input, so it is applied on the driver's cut).
            end = node.limit_end()
            offset = params["offset"]
            below.plan = below.plan.limit(end) if offset else node.with_inputs([below.plan])
            below.label = f"{below.label} -> Limit"
            below.slices_only = False
            outputs = self._gather(below, stop_after_rows=end)
            cuts = [slicing.row_range([rows for _, rows in outputs], offset, params["limit"])]
        else:
            cutter: slicing.Cutter
            if kind == "IntoPartitions":
                cutter = slicing.PartitionCutter(params["num_partitions"], below.partitions)
            else:
                cutter = slicing.BatchCutter(params["batch_size"])
            # A task over an into_batches cut re-chunks it into its one exact batch (a UDF above
            # sees the whole batch, as on the native runner); a consumer on the driver just reads
            # the cuts.
            template = (
                node.with_inputs([_placeholder(child)]) if kind == "IntoBatches" else _placeholder(node)
            )
            if below.slices_only:  # cuts of cuts: compose them on the driver
                outputs = self._gather(below)
                cuts = [cut for _, rows in outputs for cut in cutter.add(rows)] + cutter.finish()
                return self._cut_pending(template, kind, [ref for ref, _ in outputs], cuts)
            self._settle(below)
            estimate = params.get("num_partitions", below.partitions)
            return Pending(
                template, estimate, False, [], label=kind, slices_only=True, feed=Feed(below, cutter)
            )
        return self._cut_pending(_placeholder(node), kind, [ref for ref, _ in outputs], cuts)

    def _write(self, node: Any, below: Pending, params: dict[str, Any]) -> Pending:
        """write_parquet / write_csv / write_json: each task writes its files under the write's
        root, which the DataFrame writer made a staging location (ketch/io/write_commit.py); it
        commits them once this stage has succeeded. The result (one row per file: "path", the
        partition columns, "num_rows") is one partition."""
        import ray

        below.plan = node.with_inputs([below.plan])
        below.label = f"{below.label} -> Write{FORMAT_NAMES[params['format']]} (staged)"
        below.slices_only = False
        try:
            outputs = self._gather(below)
            tables = self.coordinator.get([ref for ref, _ in outputs])
        finally:
            self.coordinator.drain_abandoned()  # no task still writing when the files are committed
        table = concat(tables, node.schema())
        return Pending(
            _placeholder(node), 1, False, [[[ray.put(table)]]], label=below.label, slices_only=True
        )

    def _two_phase_aggregate(self, node: Any) -> Pending | None:
        """An aggregate whose aggregations have mergeable states (sum, count, mean, min, max,
        any_value; ``PyPlan.split_aggregate``) in two phases, or None (single-phase aggregations:
        list, concat, approx_count_distinct, stddev, nested any_value; they shuffle raw rows).

        Each task of the stage below also runs the partial aggregate over its partition (one row
        of partial states per group). With group keys the states are hash-shuffled by the keys
        into N buckets (N as for any hash exchange) and reduce task j runs the final aggregate
        (merge + finish) over bucket j; without keys, one reduce task merges every task's single
        row."""
        split = node.split_aggregate()
        if split is None:
            return None
        partial, final = split
        below = self._lower(node.inputs()[0])
        below.plan = partial.with_inputs([below.plan])
        below.label = f"{below.label} -> partial Aggregate"
        below.slices_only = False
        exchange = node.hash_exchange()
        if exchange is None:  # a global aggregate: one final task over every partial row
            refs = [outputs[0] for outputs in self._stage(below, 0, None, "map")]
            return Pending(final, 1, False, [[refs]], label="final Aggregate")
        keys = exchange[0][0]
        n = shuffle_width(node, None, below.partitions, self.config, self.shuffle_cap)
        maps = self._shuffle(below, keys, n)
        inputs = [[[outputs[j] for outputs in maps]] for j in range(n)]
        return Pending(final, n, False, inputs, label="final Aggregate")

    def _broadcast_join(self, node: Any, left: Pending, right_refs: list[Any], exchange: Exchange) -> Pending:
        """The join as partition-local over ``left``: each of its tasks joins its partition with
        the whole right side (``right_refs``: every right table; ``left`` and the tables are the
        sides of ``exchange``)."""
        self._settle(left)
        plan = node.with_inputs(
            [exchange.leaf(0, left.plan), exchange.leaf(1, _placeholder(exchange.sides[1]))]
        )
        if left.inputs:
            inputs = [[*task, right_refs] for task in left.inputs]
        else:  # a split source: one leaf, kept
            inputs = [[None, right_refs] for _ in range(left.num_tasks)]
        return Pending(
            plan,
            left.num_tasks,
            left.split_source,
            inputs,
            label=f"{left.label} -> broadcast Join",
            runs=left.runs,
            shared=left.shared,
        )

    def _broadcast_left_join(self, node: Any, left: Pending, right: Pending, exchange: Exchange) -> Pending:
        """A right join with ``strategy="broadcast"``: the left side whole to one task per
        partition of the right side (each right row is in one task only, so an unmatched one is
        output once)."""
        left_refs = [ref for ref, _ in self._gather(left)]
        inputs = [[left_refs, [ref]] for ref, _ in self._gather(right)] or [[left_refs, []]]
        plan = node.with_inputs(
            [exchange.leaf(i, _placeholder(side)) for i, side in enumerate(exchange.sides)]
        )
        return Pending(plan, len(inputs), False, inputs, label="broadcast Join (left side)")

    def _cross_join(self, node: Any) -> Pending:
        """``how="cross"``: both sides run; the side with fewer rows is broadcast whole to one task
        per partition of the other side, which pairs its partition with it (CrossJoinOperator)."""
        left_child, right_child = node.inputs()
        left = self._gather(self._lower(left_child))
        right = self._gather(self._lower(right_child))
        plan = node.with_inputs([_placeholder(left_child), _placeholder(right_child)])
        if sum(rows for _, rows in left) < sum(rows for _, rows in right):
            small = [ref for ref, _ in left]
            inputs = [[small, [ref]] for ref, _ in right] or [[small, []]]
            label = "cross Join (left side broadcast)"
        else:
            small = [ref for ref, _ in right]
            inputs = [[[ref], small] for ref, _ in left] or [[[], small]]
            label = "cross Join (right side broadcast)"
        return Pending(plan, len(inputs), False, inputs, label=label)

    def _on_driver(self, node: Any) -> tuple[pa.Table, list[int]]:
        """``node`` on the driver's native executor over its inputs' partitions (run on Ray)."""
        inputs = []
        for child in node.inputs():
            tables = list(self._final(self._lower(child)))
            table = concat(tables, child.schema())
            inputs.append(_core.PyPlan.in_memory(table, [t.num_rows for t in tables] or [0]))
        plan = node.with_inputs(inputs) if inputs else node
        return NativeRunner().execute(plan, self.config, self.stats)
