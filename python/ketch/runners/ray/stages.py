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

import math
import time
import uuid
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from ketch import _core
from ketch.runners.native import NativeRunner
from ketch.runners.ray import slicing
from ketch.runners.ray.coordinator import Coordinator, StageTasks, Upstream
from ketch.runners.ray.exchange import Exchange, exchange_of, shuffle_width
from ketch.runners.ray.flight_shuffle import (
    DEFAULT_DIR,
    FlightFetchError,
    FlightMap,
    FlightPiece,
    normalize_compression,
)
from ketch.runners.ray.progress import StageProgress
from ketch.runners.ray.sort_stage import DistributedSort, is_distributed_sort
from ketch.runners.ray.split_reads import (
    SharedReads,
    SourcePartitions,
    can_share,
    compute_template,
    plan_shares,
    read_fragment,
)
from ketch.runners.ray.tables import concat

SOURCES = ("Scan", "InMemorySource")
# Joins that keep no unmatched right rows: the right side can be sent whole to every left task.
BROADCAST_RIGHT = ("inner", "left", "semi", "anti")
DEFAULT_BROADCAST_THRESHOLD = 10 << 20  # bytes, Daft's broadcast_join_size_bytes_threshold
# Order-keeping operators run over their input's tasks without a shuffle (``_lower_ordered``).
FORMAT_NAMES = {"parquet": "Parquet", "csv": "CSV", "json": "JSON"}
ORDERED = ("Limit", "IntoPartitions", "IntoBatches", "Write", "Concat")


@dataclass
class Pending:
    """Tasks not run yet: ``plan`` over its own source (``split_source``: task i runs
    ``source_fragment(plan, runs, i)``) and/or placeholder leaves: when ``inputs`` is not empty,
    task i reads ``inputs[i][k]`` (a list of table refs) at leaf k, or the leaf itself where that
    is None (the split source under a broadcast join)."""

    plan: Any
    num_tasks: int
    split_source: bool
    inputs: list[list[list[Any]]] = field(default_factory=list)
    label: str = ""
    # A split source's tasks as (first partition, count) of its source (``source_task_runs``: the
    # row ranges of one split Parquet row group run in one task, which reads it once and returns
    # one output per partition); None: task i is partition i.
    runs: list[tuple[int, int]] | None = None
    # The read tasks of a split source whose row groups' ranges are shared out over the workers
    # (split_reads.py): each such row group is read once, its ranges computed by several tasks.
    shared: SharedReads | None = None

    @property
    def partitions(self) -> int:
        """The partitions its tasks make (more than ``num_tasks`` when a task makes several)."""
        if self.split_source and self.runs is not None:
            return sum(count for _, count in self.runs)
        return self.num_tasks

    # True while ``plan`` is only the placeholder: each task would just concatenate its input
    # slices, so a consumer may read them directly instead of running tasks.
    slices_only: bool = False
    # Set while ``inputs`` are cuts of a stage not run yet: the tasks then run pipelined behind
    # that stage (each starts as soon as the outputs it cuts exist); ``num_tasks`` is only an
    # estimate until then.
    feed: Feed | None = None


@dataclass
class Feed:
    """The stage whose ordered outputs a Pending's inputs are cut from, as they complete."""

    upstream: Pending
    cutter: slicing.Cutter
    refs: list[Any] = field(default_factory=list)  # upstream outputs so far, in order


@dataclass
class StageStats:
    """One stage of the last query: ``tasks`` run, ``rows_out`` and ``bytes_out`` of its outputs
    (for a shuffle map stage, ``bytes_shuffled`` = the bytes it left in the object store for the
    reduce tasks, or with the flight shuffle on local disk, in memory size; ``bytes_on_disk`` =
    the flight shuffle's file bytes, compressed, 0 otherwise), ``tasks_per_node`` (node id ->
    tasks), ``buckets`` (0 when not a shuffle map), ``seconds`` (wall clock)."""

    name: str
    kind: str  # "map", "shuffle map", "reduce"
    tasks: int = 0
    rows_out: int = 0
    bytes_out: int = 0
    bytes_shuffled: int = 0
    bytes_on_disk: int = 0
    # Read tasks of split row groups (each read once, its ranges shared out: split_reads.py).
    shared_reads: int = 0
    buckets: int = 0
    tasks_per_node: dict[str, int] = field(default_factory=dict)
    # The node each task ran on, in task order (a task run again: its last run).
    task_nodes: list[str] = field(default_factory=list)
    # Wall-clock seconds from the stage's start to its last task's end (a pipelined stage starts
    # with the stage feeding it).
    seconds: float = 0.0
    started: float = field(default_factory=time.monotonic)


@dataclass
class FlightShuffle:
    """One flight shuffle of the query, kept to make lost map outputs again: its map stage
    (``pending``, ``buckets``, ``keys``) and ``pieces[m][j]``, bucket j of map task m as first
    made (``QueryStages._relocated`` maps its ticket to where it was made again)."""

    pending: Pending
    buckets: int
    keys: list[str]
    pieces: list[list[FlightPiece]] = field(default_factory=list)


def _random_repartition(node: Any) -> bool:
    """``repartition(n)`` without keys: rows spread evenly, no hash (not a hash exchange)."""
    return node.kind() == "Repartition" and not node.params()["by"]


def _pieces(meta: dict[str, Any], task: int) -> list[FlightPiece]:
    """The flight pieces of flight shuffle map task ``task`` from its metadata, one per bucket."""
    return [
        FlightPiece(meta["flight"], f"{meta['shuffle_id']}/{task}/{j}", rows, meta["num_columns"])
        for j, rows in enumerate(meta["rows"])
    ]


def spread_runs(runs: list[tuple[int, int]], workers: int) -> list[tuple[int, int]]:
    """``runs`` (``PyPlan.source_task_runs``: the ranges of one split row group in one run) with
    each run of several partitions cut into at most ``workers`` runs of consecutive partitions,
    as even as can be: every engine worker can take a share of the row group and reads it once."""
    out: list[tuple[int, int]] = []
    for first, count in runs:
        parts = max(1, min(count, workers))
        size, extra = divmod(count, parts)
        for k in range(parts):
            n = size + (1 if k < extra else 0)
            out.append((first, n))
            first += n
    return out


def source_fragment(plan: Any, runs: list[tuple[int, int]] | None, index: int) -> Any:
    """Task ``index`` of a split source's stage: ``plan`` restricted to its partitions."""
    if runs is None:
        return plan.partition_fragment(index)
    first, count = runs[index]
    return plan.partition_fragment(first, count)


def _per_partition(outputs: list[Any], meta: dict[str, Any]) -> Iterator[tuple[list[Any], dict[str, Any]]]:
    """A task's result (no buckets) as one (outputs, metadata) per partition it made: a task over
    a run of several partitions (``Pending.runs``) returns one table each."""
    if len(outputs) <= 1:
        yield outputs, meta
        return
    for j, ref in enumerate(outputs):
        yield [ref], {**meta, "rows": [meta["rows"][j]], "bytes": [meta["bytes"][j]]}


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

    def _drop_flight_files(self) -> None:
        """Deletes this query's flight shuffle files on every node (each worker deletes them on
        its node after the tasks it was already given; a worker that died is skipped, its node's
        files are deleted by the others on a shared disk, or by its replacement)."""
        import ray

        if not self._flight_dirs:
            return
        dirs, self._flight_dirs = self._flight_dirs, []
        calls = [w.handle.drop_query.remote(self.query_id, dirs) for w in self.coordinator.workers if w.alive]
        if not calls:
            return
        ready, _ = ray.wait(calls, num_returns=len(calls), timeout=60)
        for ref in ready:
            try:
                ray.get(ref)
            except Exception:  # noqa: BLE001 - a worker gone meanwhile: nothing left to delete there
                pass

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

    @staticmethod
    def _cut_pending(template: Any, label: str, refs: list[Any], cuts: list[list[Any]]) -> Pending:
        """A slices-only Pending whose task j reads cut j of the tables ``refs``."""
        inputs = [[[(refs[i], offset, length) for i, offset, length in cut]] for cut in cuts]
        if not inputs:  # into_batches over no rows: no partitions; keep one empty one
            inputs = [[[]]]
        return Pending(template, len(inputs), False, inputs, label=label, slices_only=True)

    def _settle(self, pending: Pending) -> None:
        """Runs the stage feeding ``pending`` (if any) to its end and fixes ``pending``'s inputs:
        for the places that need all of its tasks known (a broadcast join's left side, a stage
        feeding another pipelined one, reading the cuts on the driver)."""
        feed = pending.feed
        if feed is None:
            return
        outputs = self._gather(feed.upstream)
        cuts = [cut for _, rows in outputs for cut in feed.cutter.add(rows)] + feed.cutter.finish()
        settled = self._cut_pending(pending.plan, pending.label, [ref for ref, _ in outputs], cuts)
        pending.inputs, pending.num_tasks, pending.feed = settled.inputs, settled.num_tasks, None

    def _gather(self, pending: Pending, stop_after_rows: int | None = None) -> list[tuple[Any, int]]:
        """Runs ``pending``'s tasks; (ref of its output, its rows) per task in order. With
        ``stop_after_rows`` the stage stops (tasks still running are cancelled) once the tasks
        done in order hold that many rows."""
        if pending.slices_only:
            self._settle(pending)
            return self._materialized(pending)
        outputs: list[tuple[Any, int]] = []
        total = 0
        tasks = self._stage_with_meta(pending, 0, None, self._kind(pending))
        try:
            for refs, meta in tasks:
                outputs.append((refs[0], meta["rows"][0]))
                total += meta["rows"][0]
                if stop_after_rows is not None and total >= stop_after_rows:
                    break
        finally:
            tasks.close()
        return outputs

    def _materialized(self, pending: Pending) -> list[tuple[Any, int]]:
        """A slices-only pending resolved without tasks: one table per task, put in the object
        store by the driver (limits: small cuts; stacked cuts: into_batches over a limit)."""
        import ray

        return [(ray.put(table), table.num_rows) for table in self._read_slices(pending)]

    def _stream_cuts(self, pending: Pending) -> Iterator[pa.Table]:
        """The result of into_partitions / into_batches over a stage (``pending.feed``), each cut
        read on the driver as soon as the upstream outputs it needs exist (they complete in task
        order), so the first partitions reach ``iter_partitions`` while later tasks still run."""
        feed = pending.feed
        assert feed is not None
        schema = pending.plan.schema()
        refs: list[Any] = []

        def read(cut: list[Any]) -> pa.Table:
            items = [(refs[i], offset, length) for i, offset, length in cut]
            tables = self.coordinator.get([ref for ref, _, _ in items])
            return concat(
                [t.slice(offset, length) for (_, offset, length), t in zip(items, tables, strict=True)],
                schema,
            )

        produced = 0
        tasks = self._stage_with_meta(feed.upstream, 0, None, self._kind(feed.upstream))
        try:
            for outputs, meta in tasks:
                refs.append(outputs[0])
                for cut in feed.cutter.add(meta["rows"][0]):
                    produced += 1
                    yield read(cut)
        finally:
            tasks.close()
        for cut in feed.cutter.finish():
            produced += 1
            yield read(cut)
        if produced == 0:  # into_batches over no rows: one empty partition, as when settled
            yield schema.empty_table()

    def _read_slices(self, pending: Pending) -> Iterator[pa.Table]:
        """The tables of a slices-only pending (settled), one per task, read on the driver (an
        output lost with its node is made again first: ``Coordinator.get``)."""
        coordinator = self.coordinator
        for task in pending.inputs:
            items = task[0]
            tables = coordinator.get([item[0] if isinstance(item, tuple) else item for item in items])
            tables = [
                table.slice(item[1], item[2]) if isinstance(item, tuple) else table
                for item, table in zip(items, tables, strict=True)
            ]
            yield concat(tables, pending.plan.schema())

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

    # -- running stages ---------------------------------------------------------------------------
    def _stage(
        self,
        pending: Pending,
        buckets: int,
        keys: list[str] | None,
        kind: str,
        preferred_nodes: list[str | None] | None = None,
    ) -> Iterator[Any]:
        """Runs ``pending``'s tasks; yields each task's output refs in task order."""
        for outputs, _meta in self._stage_with_meta(pending, buckets, keys, kind, preferred_nodes):
            yield outputs

    @staticmethod
    def _kind(pending: Pending) -> str:
        return "map" if pending.split_source or pending.label.startswith("driver") else "reduce"

    def _stage_with_meta(
        self,
        pending: Pending,
        buckets: int,
        keys: list[str] | None,
        kind: str,
        preferred_nodes: list[str | None] | None = None,
        flight: bool = False,
    ) -> Generator[tuple[Any, dict[str, Any]], None, None]:
        """Runs ``pending``'s tasks; yields each task's (output refs, metadata) in task order
        (``flight``: a flight shuffle map stage, its tasks write their buckets to local disk and
        yield (None, metadata)).
        A fed pending runs pipelined behind the stage feeding it (``Coordinator.run``'s
        upstream): its tasks start as the cuts they read become complete."""
        feed = pending.feed
        if feed is None:
            yield from self._run_stage(pending, buckets, keys, kind, preferred_nodes, flight)
            return
        up = feed.upstream
        up_stat, up_tasks = self._stage_tasks(up, 0, None, self._kind(up), None)
        stat, tasks = self._stage_tasks(pending, buckets, keys, kind, preferred_nodes, flight)
        pending.inputs = []

        def release(index: int | None, outputs: Any, meta: Any) -> int:
            if index is None:
                cuts = feed.cutter.finish()
            else:
                self._record(up_stat, meta, 0)
                cuts = []
                for part, part_meta in _per_partition(outputs, meta):
                    feed.refs.append(part[0])
                    cuts += feed.cutter.add(part_meta["rows"][0])
            pending.inputs.extend([[[(feed.refs[i], o, n) for i, o, n in cut]] for cut in cuts])
            if index is None and not pending.inputs:
                pending.inputs.append([[]])  # no rows at all: one empty partition
            return len(pending.inputs)

        with StageProgress(self.config, stat.name, -1, position=len(self.stages) - 1) as bar:
            for outputs, meta in self.coordinator.run(tasks, Upstream(up_tasks, release)):
                self._record(stat, meta, buckets)
                bar.task_done(sum(meta["rows"]))
                yield outputs, meta
        pending.num_tasks, pending.feed = len(pending.inputs), None

    def _record(self, stat: StageStats, meta: dict[str, Any], buckets: int) -> None:
        if meta.get("scan"):
            self.stats.add_scan(meta["scan"])  # the task's scans, for explain_analyze
        stat.tasks += 1
        stat.rows_out += sum(meta["rows"])
        stat.bytes_out += sum(meta["bytes"])
        if buckets:
            stat.bytes_shuffled += sum(meta["bytes"])
            stat.bytes_on_disk += sum(meta.get("file_bytes", ()))
        stat.tasks_per_node[meta["node_id"]] = stat.tasks_per_node.get(meta["node_id"], 0) + 1
        stat.task_nodes.append(meta["node_id"])
        stat.seconds = time.monotonic() - stat.started

    def _run_stage(
        self,
        pending: Pending,
        buckets: int,
        keys: list[str] | None,
        kind: str,
        preferred_nodes: list[str | None] | None,
        flight: bool = False,
    ) -> Generator[tuple[Any, dict[str, Any]], None, None]:
        reads: dict[int, list[Any]] | None = {} if pending.split_source and pending.shared else None
        stat, tasks = self._stage_tasks(pending, buckets, keys, kind, preferred_nodes, flight, reads)
        upstream = None if reads is None else self.shared_reads(pending, stat, reads)
        try:
            with StageProgress(
                self.config, stat.name, pending.num_tasks, position=len(self.stages) - 1
            ) as bar:
                for outputs, meta in self.coordinator.run(tasks, upstream):
                    self._record(stat, meta, buckets)
                    bar.task_done(sum(meta["rows"]))
                    if buckets:
                        yield outputs, meta
                    else:
                        yield from _per_partition(outputs, meta)
        finally:
            if reads is not None:
                reads.clear()  # the row groups leave the object store (a later rerun reads its own)

    def shared_reads(self, pending: Pending, stat: StageStats, reads: dict[int, list[Any]]) -> Upstream:
        """The read tasks of a split source's stage (split_reads.py): read task r reads the ranges
        ``pending.shared.reads[r]`` once and returns one table per range (with their source rows);
        its outputs go into ``reads[r]``, and the compute tasks that share them start then."""
        shared = pending.shared
        assert shared is not None and pending.runs is not None
        config, plan = self.config, pending.plan
        name = f"{stat.name} [row group reads]"

        def submit(handle: Any, r: int) -> tuple[Any, Any]:
            first, count = shared.reads[r]
            payload = read_fragment(plan, first, count).to_bytes()
            refs = handle.run_task.options(num_returns=count + 1).remote(
                payload, config, None, 0, None, None, count
            )
            return refs[-1], refs[:-1]

        ready = 0  # compute tasks that may start: in order, up to the first whose read is not done

        def release(r: int | None, outputs: Any, meta: Any) -> int:
            nonlocal ready
            if r is None:
                return pending.num_tasks
            reads[r] = list(outputs)
            if meta.get("scan"):
                self.stats.add_scan(meta["scan"])  # the row group read once, for explain_analyze
            stat.shared_reads += 1
            while ready < pending.num_tasks and (
                shared.shares[ready] is None or shared.shares[ready][0] in reads  # type: ignore[index]
            ):
                ready += 1
            return ready

        while ready < pending.num_tasks and shared.shares[ready] is None:
            ready += 1
        reads_stage = StageTasks(name, len(shared.reads), submit, recover=self.recover_hook())
        return Upstream(reads_stage, release, ready=ready)

    def fragments(
        self, pending: Pending, reads: dict[int, list[Any]] | None = None
    ) -> Callable[[int], tuple[bytes, list[Any] | None]]:
        """Task ``index`` of ``pending``'s stage as (its fragment's bytes, its inputs): its own
        source's partitions, or with ``reads`` (the outputs of a split source's read tasks so far,
        ``shared_reads``) a task sharing a read still in there runs over its ranges' tables; any
        other one reads its own ranges (a task run again after the stage ended)."""
        # The plan as it is now: a task run again later (its output lost with its node) must run
        # the same fragment, whatever is done to ``pending`` meanwhile.
        plan, split_source, runs = pending.plan, pending.split_source, pending.runs
        shared = None if split_source else plan.to_bytes()
        lineage = self.coordinator.lineage
        shares = pending.shared.shares if split_source and pending.shared and reads is not None else None
        template = compute_template(plan).to_bytes() if shares else None

        def fragment(index: int) -> tuple[bytes, list[Any] | None]:
            payload = source_fragment(plan, runs, index).to_bytes() if split_source else shared
            inputs = lineage.resolve(pending.inputs[index]) if pending.inputs else None
            share = shares[index] if shares else None
            if share is not None and reads is not None and share[0] in reads and runs is not None:
                # Its ranges' tables, made by the read task of their row group (split_reads.py).
                read, first = share
                tables = lineage.resolve(reads[read][first : first + runs[index][1]])
                payload = template
                inputs = [SourcePartitions(tables), *(inputs[1:] if inputs else [])]
            return payload, self.relocate(inputs)

        return fragment

    def _stage_tasks(
        self,
        pending: Pending,
        buckets: int,
        keys: list[str] | None,
        kind: str,
        preferred_nodes: list[str | None] | None,
        flight: bool = False,
        reads: dict[int, list[Any]] | None = None,
    ) -> tuple[StageStats, StageTasks]:
        """The stage's stats entry (appended to ``stages``) and its tasks for the coordinator.
        ``reads``: the outputs of a split source's read tasks so far (``shared_reads``; see
        ``fragments``)."""
        number = len(self.stages) + 1
        if buckets:
            how = f"hash shuffle by {keys}" if keys else "random shuffle"
            via = " via flight_shuffle" if flight else ""
            what = f"{pending.label} -> {how} into {buckets}{via}"
        else:
            what = pending.label
        stat = StageStats(f"stage {number} ({kind}: {what})", kind, buckets=buckets)
        self.stages.append(stat)
        config = self.config
        runs = pending.runs if pending.split_source else None
        fragment = self.fragments(pending, reads)

        def submit(handle: Any, index: int) -> tuple[Any, Any]:
            payload, inputs = fragment(index)
            if flight:  # buckets to local disk; only the metadata comes back
                spec = FlightMap(self.query_id, number, index, tuple(self._flight_dirs), self._compression())
                run = handle.run_task.options(num_returns=1)
                return run.remote(payload, config, inputs, buckets, keys, spec), []
            outputs = runs[index][1] if runs is not None and not buckets else 1
            if outputs > 1:  # a run of several partitions: one table each
                refs = handle.run_task.options(num_returns=outputs + 1).remote(
                    payload, config, inputs, 0, keys, None, outputs
                )
                return refs[-1], refs[:-1]
            refs = handle.run_task.options(num_returns=max(1, buckets) + 1).remote(
                payload, config, inputs, buckets, keys
            )
            return refs[-1], refs[:-1]

        # A random shuffle's map task spreads its rows differently each time it runs.
        replayable = not (buckets and not keys)
        return stat, StageTasks(
            stat.name,
            pending.num_tasks,
            submit,
            preferred_nodes=preferred_nodes,
            replayable=replayable,
            recover=self.recover_hook(),
        )

    def _shuffle(self, pending: Pending, keys: list[str], buckets: int) -> list[list[Any]]:
        """The map side: per map output, the refs of its ``buckets`` bucket tables (one output per
        task of ``pending`` with map_reduce, one per merge group with pre_shuffle_merge)."""
        algorithm = self._shuffle_algorithm(pending.num_tasks, buckets)
        if algorithm == "pre_shuffle_merge":
            return self._pre_shuffle_merge(pending, keys, buckets)
        if algorithm == "flight_shuffle":
            return self._flight_shuffle(pending, keys, buckets)
        return list(self._stage(pending, buckets, keys, "shuffle map"))

    def _shuffle_algorithm(self, map_tasks: int, buckets: int) -> str:
        """The config's ``shuffle_algorithm``; "auto" picks pre_shuffle_merge when
        sqrt(M x N) > ``pre_shuffle_merge_partition_threshold``, as Daft does."""
        algorithm = getattr(self.config, "shuffle_algorithm", "auto")
        if algorithm != "auto":
            return str(algorithm)
        threshold = getattr(self.config, "pre_shuffle_merge_partition_threshold", 200)
        return "pre_shuffle_merge" if math.sqrt(map_tasks * buckets) > threshold else "map_reduce"

    def _pre_shuffle_merge(self, pending: Pending, keys: list[str], buckets: int) -> list[list[Any]]:
        """Map tasks keep their whole output on their node; the outputs of each node are then
        grouped in task order up to ``pre_shuffle_merge_threshold`` bytes, and one task per group,
        on that node's worker, concatenates and hash-partitions the group into ``buckets``."""
        threshold = getattr(self.config, "pre_shuffle_merge_threshold", 1 << 30)
        groups: dict[str, list[tuple[list[Any], int]]] = {}  # node -> [(refs, bytes)]
        for refs, meta in self._stage_with_meta(pending, 0, None, "pre-shuffle map"):
            node_groups = groups.setdefault(meta["node_id"], [([], 0)])
            group_refs, size = node_groups[-1]
            if group_refs and size + meta["bytes"][0] > threshold:
                node_groups.append(([], 0))
                group_refs, size = node_groups[-1]
            group_refs.append(refs[0])
            node_groups[-1] = (group_refs, size + meta["bytes"][0])
        nodes = [node for node, node_groups in groups.items() for _ in node_groups]
        inputs = [[group_refs] for node_groups in groups.values() for group_refs, _ in node_groups]
        merge = Pending(_placeholder(pending.plan), len(inputs), False, inputs, label="pre-shuffle merge")
        return list(self._stage(merge, buckets, keys, "shuffle map", preferred_nodes=nodes))

    def _compression(self) -> str | None:
        return normalize_compression(getattr(self.config, "flight_shuffle_compression", "lz4"))

    def _flight_shuffle(self, pending: Pending, keys: list[str], buckets: int) -> list[list[Any]]:
        """The map side of the flight shuffle: each task of ``pending`` writes its ``buckets``
        buckets to its node's disk (flight_shuffle.py); per task, one ``FlightPiece`` per bucket
        (the worker's Flight address, the ticket, the rows), read by the reduce tasks."""
        dirs = getattr(self.config, "flight_shuffle_dirs", None) or [DEFAULT_DIR]
        for d in dirs:
            if d not in self._flight_dirs:
                self._flight_dirs.append(d)
        shuffle = FlightShuffle(pending, buckets, keys)
        self._flight_shuffles.append(shuffle)
        for _, meta in self._stage_with_meta(pending, buckets, keys, "shuffle map", flight=True):
            shuffle.pieces.append(_pieces(meta, len(shuffle.pieces)))
        return [list(pieces) for pieces in shuffle.pieces]

    def relocate(self, inputs: list[Any] | None) -> list[Any] | None:
        """A task's inputs (None: it reads its own source) with the flight pieces made again
        (after their worker was lost) pointing at their new place."""
        if inputs is None or not self._relocated:
            return inputs
        return [
            [self._relocated.get(p.ticket, p) if isinstance(p, FlightPiece) else p for p in leaf]
            if isinstance(leaf, list)
            else leaf  # None (its own source) or a split row group's SourcePartitions
            for leaf in inputs
        ]

    def recover_hook(self) -> Any:
        """``StageTasks.recover`` for a stage of this query: None until a flight shuffle ran."""
        return self._recover_flight if self._flight_shuffles else None

    def _recover_flight(self, error: BaseException) -> bool:
        """After a task failed to fetch a flight piece (``FlightFetchError``): runs again, on the
        workers alive, every map task of every flight shuffle of the query whose outputs were at
        that address (as a "shuffle map (recompute)" stage each) and points the pieces at the
        new outputs; True when the failed task may run again. Other errors: False."""
        address = getattr(error, "address", None)
        if not isinstance(error, FlightFetchError) or address is None:
            return False
        if address in self._lost_addresses:
            return True  # already made again: the task reads the relocated pieces
        self._lost_addresses.add(address)
        found = False
        for shuffle in self._flight_shuffles:  # in the order they ran: later ones read earlier ones
            lost = [
                m
                for m, pieces in enumerate(shuffle.pieces)
                if any(self._relocated.get(p.ticket, p).address == address for p in pieces)
            ]
            if not lost:
                continue
            found = True
            stat, tasks = self._stage_tasks(
                shuffle.pending, shuffle.buckets, shuffle.keys, "shuffle map (recompute)", None, flight=True
            )
            stat.name += f" [map tasks {lost} lost with {address}]"

            def submit(handle: Any, k: int, run: Any = tasks.submit, lost: list[int] = lost) -> Any:
                return run(handle, lost[k])

            again = StageTasks(stat.name, len(lost), submit, recover=tasks.recover)
            for k, (_, meta) in enumerate(self.coordinator.run(again)):
                self._record(stat, meta, shuffle.buckets)
                for first, new in zip(shuffle.pieces[lost[k]], _pieces(meta, lost[k]), strict=True):
                    self._relocated[first.ticket] = new
        return found

    def _final(self, pending: Pending) -> Iterator[pa.Table]:

        if pending.slices_only and pending.feed is not None:
            yield from self._stream_cuts(pending)
            return
        if pending.slices_only:  # cuts of outputs already in the object store: read them here
            self._settle(pending)
            yield from self._read_slices(pending)
            return
        for outputs in self._stage(pending, 0, None, self._kind(pending)):
            yield self.coordinator.get([outputs[0]])[0]
