"""The distributed sort on Ray: sample, range shuffle, sort per range (as Daft and Spark do).

A ``Sort`` over an input of M > 1 tasks runs in three stages:

1. **sample**: the input's tasks run on the engine workers as usual; each leaves its output table
   in Ray's object store and sends back, in its metadata, a random sample of its sort-key columns
   (at most ``min(10_000, 100 x N)`` rows) and its row count.
2. The driver weights the samples by their tasks' row counts and cuts them into N - 1 range
   boundaries (``_core.range_boundaries``: Arrow's sort order, so per-key direction, null
   placement and NaNs are those of the native sort). N = M, at most ``max_shuffle_partitions``.
3. **range shuffle map**: task i splits output i into N ranges (``_core.range_partition``: rows
   that sort equal share a range; input order kept within a range), left in the object store as N
   objects. **reduce (Sort)**: task j sorts range j of every map task, read in map-task order, on
   an engine worker; the outputs come back in range order, so their concatenation is the sorted
   input.

The native sort is stable (a k-way merge of sorted runs in input order); so is this one: rows
with equal keys land in one range, where they keep their input order (map task order, then row
order), and each range is sorted with the same stable sort. Sort keys are columns (the logical
plan refuses expressions: computed keys come from ``with_column``).

An input of one task is sorted in that task (no shuffle). ``Limit(Sort)`` with at most
``TOP_K_MAX_ROWS`` rows (offset included) is a top-k: each input task keeps its own first k rows in sort order
(stage "top-k map"), and one task on a worker sorts their union and keeps k ("top-k merge");
with a stable sort this is exactly the first k rows of the global sort."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ketch import _core

if TYPE_CHECKING:
    from ketch.runners.ray.stage_tasks import Pending, StageStats
    from ketch.runners.ray.stages import QueryStages

# A Limit of at most this many rows over a Sort runs as a top-k (no range shuffle).
TOP_K_MAX_ROWS = 100_000
# Sample rows per input task: SAMPLE_ROWS_PER_RANGE per output range, at most MAX_SAMPLE_ROWS.
SAMPLE_ROWS_PER_RANGE = 100
MAX_SAMPLE_ROWS = 10_000


def is_distributed_sort(node: Any) -> bool:
    """True when the Ray runner sorts ``node`` on the workers: a Sort, or a Limit of at most
    ``TOP_K_MAX_ROWS`` rows right above one (a top-k)."""
    kind = node.kind()
    if kind == "Sort":
        return True
    if kind == "Limit":
        end = node.limit_end()  # offset + limit: the rows each task must keep
        return end is not None and end <= TOP_K_MAX_ROWS and node.inputs()[0].kind() == "Sort"
    return False


def sample_rows(num_ranges: int) -> int:
    """Sample rows each input task sends back for ``num_ranges`` output ranges."""
    return min(MAX_SAMPLE_ROWS, SAMPLE_ROWS_PER_RANGE * max(1, num_ranges))


def sample_keys(table: pa.Table, columns: list[str], rows: int, seed: int = 0) -> pa.Table:
    """At most ``rows`` rows of ``table``'s ``columns``, drawn at random without replacement
    (deterministic for a given ``seed``); the whole key columns when the table is that small."""
    keys = table.select(columns)
    if keys.num_rows <= rows:
        return keys.combine_chunks()
    picks = np.random.default_rng(seed).choice(keys.num_rows, size=rows, replace=False)
    return keys.take(pa.array(np.sort(picks)))


def weighted_sample(samples: list[pa.Table], rows: list[int], budget: int) -> pa.Table:
    """One sample of the whole input from per-task ``samples`` (uniform within each task) and
    the tasks' row counts: task i contributes about ``budget x rows[i] / sum(rows)`` of its rows,
    so a large task's sample weighs as much as its rows (``budget`` <= each task's sample cap)."""
    total = sum(rows)
    if total == 0:
        return samples[0].slice(0, 0)
    parts = []
    for sample, count in zip(samples, rows, strict=True):
        keep = min(sample.num_rows, math.ceil(budget * count / total))
        parts.append(sample.slice(0, keep))
    return pa.concat_tables(parts)


def sample_task(
    worker: Any, fragment: bytes, config: Any, inputs: Any, columns: list[str], rows: int
) -> tuple[Any, ...]:
    """The engine worker's sample task: ``worker.run_task`` (one output table) plus, in the
    metadata, "sample": at most ``rows`` random rows of the output's ``columns``."""
    table, meta = worker.run_task(fragment, config, inputs, 0, None)
    meta["sample"] = sample_keys(table, columns, rows, seed=table.num_rows)
    return table, meta


def range_partition_task(
    table: pa.Table,
    columns: list[str],
    descending: list[bool],
    nulls_first: list[bool],
    boundaries: pa.Table,
    buckets: int,
) -> tuple[Any, ...]:
    """The engine worker's range shuffle map task: ``table`` split into ``buckets`` ranges by
    ``boundaries`` (at most buckets - 1 rows of the key columns), returned as (range 0, ...,
    range N-1, metadata) with the metadata of ``EngineWorker.run_task``."""
    import ray

    parts = _core.range_partition(table, columns, descending, nulls_first, boundaries, buckets)
    meta = {
        "rows": [t.num_rows for t in parts],
        "bytes": [t.nbytes for t in parts],
        "node_id": ray.get_runtime_context().get_node_id(),
    }
    return (*parts, meta)


class DistributedSort:
    """Lowers a Sort (or a top-k Limit over one) of one query into its stages."""

    def __init__(self, query: QueryStages) -> None:
        self.query = query

    def lower(self, node: Any) -> Pending:
        """The Pending reduce stage that yields ``node``'s output partitions in sort order."""
        from ketch.runners.ray.stage_tasks import Pending, _placeholder

        if node.kind() == "Limit":
            return self._top_k(node)
        child = self.query._lower(node.inputs()[0])
        self.query._settle(child)  # the sample stage needs every task's inputs known
        if child.num_tasks <= 1:  # one partition: sorted in its own task
            child.plan = node.with_inputs([child.plan])
            child.label = f"{child.label} -> Sort"
            child.slices_only = False
            return child
        columns, descending, nulls_first = node.sort_spec()
        n = max(1, min(child.num_tasks, self.query.max_shuffle_partitions))
        tables, metas = self._sample(child, columns, sample_rows(n))
        sample = weighted_sample(
            [m["sample"] for m in metas], [sum(m["rows"]) for m in metas], sample_rows(n)
        )
        if sample.num_rows == 0:
            n = 1
        boundaries = _core.range_boundaries(sample, columns, descending, nulls_first, n)
        nodes = [m.get("node_id") for m in metas]  # each map task where its input table lives
        maps = self._range_shuffle(tables, columns, descending, nulls_first, boundaries, n, nodes)
        template = node.with_inputs([_placeholder(node.inputs()[0])])
        inputs = [[[outputs[j] for outputs in maps]] for j in range(n)]
        return Pending(template, n, False, inputs, label="Sort")

    # -- stages -------------------------------------------------------------------------------------
    def _run(
        self,
        stat: StageStats,
        num_tasks: int,
        submit: Callable[[Any, int], tuple[Any, Any]],
        preferred_nodes: list[str | None] | None = None,
        upstream: Any = None,
    ) -> Iterator[tuple[Any, dict[str, Any]]]:
        """Runs one stage's tasks, counting them in ``stat``; yields (outputs, metadata) per task
        in task order. ``preferred_nodes``: per task, the node whose engine worker should run it
        (where its input lives; soft, ``StageTasks.preferred_nodes``). ``upstream``: the read tasks
        of a split source the stage's tasks share (``QueryStages.shared_reads``)."""
        from ketch.runners.ray.coordinator import StageTasks
        from ketch.runners.ray.progress import StageProgress

        self.query.stages.append(stat)
        position = len(self.query.stages) - 1
        with StageProgress(self.query.config, stat.name, num_tasks, position=position) as bar:
            stage = StageTasks(
                stat.name,
                num_tasks,
                submit,
                preferred_nodes=preferred_nodes,
                recover=self.query.recover_hook(),
            )
            for outputs, meta in self.query.coordinator.run(stage, upstream):
                self.query._record(stat, meta, stat.buckets)
                bar.task_done(sum(meta["rows"]))
                yield outputs, meta

    def _name(self, kind: str, what: str) -> str:
        return f"stage {len(self.query.stages) + 1} ({kind}: {what})"

    def _sample(
        self, child: Pending, columns: list[str], rows: int
    ) -> tuple[list[Any], list[dict[str, Any]]]:
        """The sample stage: ``child``'s tasks, each returning its output (left in the object
        store) and a sample of its ``columns``."""
        from ketch.runners.ray.stage_tasks import StageStats

        stat = StageStats(self._name("sample", f"{child.label} -> sample {columns}"), "sample")
        config = self.query.config
        # A split source's row groups are read once and shared out (split_reads.py).
        reads: dict[int, list[Any]] | None = {} if child.split_source and child.shared else None
        fragment = self.query.fragments(child, reads)

        def submit(handle: Any, index: int) -> tuple[Any, Any]:
            payload, inputs = fragment(index)  # flight pieces as made again, if lost
            table, meta = handle.run_sample_task.options(num_returns=2).remote(
                payload, config, inputs, columns, rows
            )
            return meta, table

        upstream = None if reads is None else self.query.shared_reads(child, stat, reads)
        tables, metas = [], []
        try:
            for table, meta in self._run(stat, child.num_tasks, submit, upstream=upstream):
                tables.append(table)
                metas.append(meta)
        finally:
            if reads is not None:
                reads.clear()
        return tables, metas

    def _range_shuffle(
        self,
        tables: list[Any],
        columns: list[str],
        descending: list[bool],
        nulls_first: list[bool],
        boundaries: pa.Table,
        n: int,
        nodes: list[str | None] | None = None,
    ) -> list[list[Any]]:
        """The range shuffle map stage: per input table, the refs of its ``n`` ranges. Map task i
        runs on the node of ``nodes[i]`` (the sample task that left table i in that node's object
        store: no transfer) while its engine worker has room, as the pre-shuffle merge does."""
        import ray

        from ketch.runners.ray.stage_tasks import StageStats

        stat = StageStats(
            self._name("range shuffle map", f"range partition by {columns} into {n}"),
            "range shuffle map",
            buckets=n,
        )
        bounds = ray.put(boundaries)
        lineage = self.query.coordinator.lineage

        def submit(handle: Any, index: int) -> tuple[Any, Any]:
            refs = handle.run_range_partition_task.options(num_returns=n + 1).remote(
                lineage.resolve(tables[index]), columns, descending, nulls_first, bounds, n
            )
            return refs[-1], refs[:-1]

        return [outputs for outputs, _meta in self._run(stat, len(tables), submit, nodes)]

    def _top_k(self, limit: Any) -> Pending:
        """Limit(Sort(x)): each task of x keeps its first k rows in sort order; one task merges."""
        from ketch.runners.ray.stage_tasks import Pending, _placeholder

        sort = limit.inputs()[0]
        child = self.query._lower(sort.inputs()[0])
        self.query._settle(child)
        sorted_plan = sort.with_inputs([child.plan])
        child.label = f"{child.label} -> Sort -> Limit"
        child.slices_only = False
        if child.num_tasks <= 1:
            child.plan = limit.with_inputs([sorted_plan])
            return child
        # Each task keeps its first offset + limit rows; the merge applies the offset.
        child.plan = sorted_plan.limit(limit.limit_end())
        outputs = [refs[0] for refs in self.query._stage(child, 0, None, "top-k map")]
        template = limit.with_inputs([sort.with_inputs([_placeholder(sort.inputs()[0])])])
        return Pending(template, 1, False, [[outputs]], label="top-k merge: Sort -> Limit")
