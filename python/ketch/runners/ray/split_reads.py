"""Split Parquet row groups on Ray: each row group read once per query, its ranges spread over the workers.

Below an expensive pipeline the optimizer cuts a large Parquet row group into row ranges (scan
tasks); the native executor reads the row group once and spreads the ranges over its threads.
On Ray the ranges of one row group (a "run", ``PyPlan.source_task_runs``) are cut into at most one
share per engine worker, so every node gets part of the expensive pipeline (``plan_shares``). The
row group is then read once, by a **read task** (the bare scan of the whole run, its pushdowns
included, on one worker), which returns one table per range with an extra int64 column
``__ketch_source_row``: each row's source row (``_source_row()``, kept through pushed filters).
Each share is then a **compute task** over the read task's tables of its ranges: the pipeline
above the scan runs over an in-memory source of those tables (``SourcePartitions``), one partition
per range, which takes its rows' source rows from that column (exec/sources/in_memory_source.h),
so errors, row-seeded functions and partitions are those of the native run. Compute tasks start
as soon as the read of their row group is done (``Coordinator.run``'s upstream lane); the read's
outputs cross nodes through Ray's object store, and a read output lost with its node is made again
from lineage like any task output."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ketch import _core

SOURCE_ROW_COLUMN = "__ketch_source_row"  # internal::kSourceRowColumn (source_row_function.h)
SOURCES = ("Scan", "InMemorySource")


@dataclass
class SharedReads:
    """The read tasks of one split source's stage: ``reads[r]`` = (first partition, count) of the
    source read by read task r; ``shares[i]`` = (r, k) when compute task i takes the outputs
    ``k .. k + count_i - 1`` of read task r, or None when task i reads its own source (a run not
    cut: its one task reads the row group once anyway)."""

    reads: list[tuple[int, int]]
    shares: list[tuple[int, int] | None]


def plan_shares(
    runs: list[tuple[int, int]], workers: int
) -> tuple[list[tuple[int, int]], SharedReads | None]:
    """``runs`` (``PyPlan.source_task_runs``) with each run of several partitions cut into at most
    ``workers`` shares of consecutive partitions, as even as can be; and the read tasks of the runs
    so cut (None when no run was cut)."""
    out: list[tuple[int, int]] = []
    reads: list[tuple[int, int]] = []
    shares: list[tuple[int, int] | None] = []
    for first, count in runs:
        parts = max(1, min(count, workers))
        size, extra = divmod(count, parts)
        offset = 0
        for k in range(parts):
            n = size + (1 if k < extra else 0)
            out.append((first + offset, n))
            shares.append((len(reads), offset) if parts > 1 else None)
            offset += n
        if parts > 1:
            reads.append((first, count))
    return out, (SharedReads(reads, shares) if reads else None)


def source_of(plan: Any) -> Any:
    """The source under ``plan``'s first-input chain (the split source of a stage's fragment)."""
    node = plan
    while node.kind() not in SOURCES:
        node = node.inputs()[0]
    return node


def with_source(plan: Any, leaf: Any) -> Any:
    """``plan`` with the source under its first-input chain replaced by ``leaf``."""
    if plan.kind() in SOURCES:
        return leaf
    inputs = plan.inputs()
    return plan.with_inputs([with_source(inputs[0], leaf), *inputs[1:]])


def can_share(plan: Any) -> bool:
    """Whether ``plan``'s source rows can travel in the extra column (its name is free)."""
    return SOURCE_ROW_COLUMN not in source_of(plan).schema().names


def read_fragment(plan: Any, first: int, count: int) -> Any:
    """The read task of partitions ``first .. first + count - 1`` of ``plan``'s source: the bare
    source (pushdowns included), its rows with their source rows in ``SOURCE_ROW_COLUMN``."""
    source = source_of(plan).partition_fragment(first, count)
    exprs = [_core.col(name) for name in source.schema().names]
    exprs.append(_core.call("_source_row", [], {}).alias(SOURCE_ROW_COLUMN))
    return source.project(exprs)


def compute_template(plan: Any) -> Any:
    """``plan`` over an empty in-memory placeholder of its source's schema (a compute task's
    fragment: the worker fills the placeholder with its ``SourcePartitions``)."""
    return with_source(plan, _core.PyPlan.in_memory(source_of(plan).schema().empty_table()))


@dataclass
class SourcePartitions:
    """A compute task's input at its source leaf: the refs of the read task's tables of its
    partitions (in order, each with ``SOURCE_ROW_COLUMN``), filled by the engine worker."""

    refs: list[Any]

    def plan(self) -> Any:
        """An in-memory source of the tables, one partition each, their source rows taken from the
        extra column (then projected away)."""
        import pyarrow as pa
        import ray

        tables = ray.get(self.refs)
        table = pa.concat_tables(tables)
        names = [name for name in table.schema.names if name != SOURCE_ROW_COLUMN]
        source = _core.PyPlan.in_memory(table, [t.num_rows for t in tables])
        return source.project([_core.col(name) for name in names])
