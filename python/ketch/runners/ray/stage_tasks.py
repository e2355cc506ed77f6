"""Running the stages of a query on Ray: what a stage is before it runs (``Pending``: its plan,
tasks and inputs; ``Feed``), its statistics (``StageStats``: tasks, rows, bytes, seconds, shown by
``explain_analyze``), and ``StageRunning``, the part of ``QueryStages`` that turns a pending stage
into tasks on the engine workers through the coordinator (shared reads of split row groups,
fragments of a split source, per-node placement)."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

from ketch import _core
from ketch.runners.ray import slicing
from ketch.runners.ray.coordinator import StageTasks, Upstream
from ketch.runners.ray.flight_shuffle import (
    FlightMap,
)
from ketch.runners.ray.progress import StageProgress
from ketch.runners.ray.split_reads import (
    SharedReads,
    SourcePartitions,
    compute_template,
    read_fragment,
)


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


class StageRunning:
    """The stage-running methods of ``QueryStages`` (stages.py)."""

    @staticmethod
    def _cut_pending(template: Any, label: str, refs: list[Any], cuts: list[list[Any]]) -> Pending:
        """A slices-only Pending whose task j reads cut j of the tables ``refs``."""
        inputs = [[[(refs[i], offset, length) for i, offset, length in cut]] for cut in cuts]
        if not inputs:  # into_batches over no rows: no partitions; keep one empty one
            inputs = [[[]]]
        return Pending(template, len(inputs), False, inputs, label=label, slices_only=True)

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
