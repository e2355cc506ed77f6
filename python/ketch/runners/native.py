"""The native runner: the whole optimized plan on the native executor, in this process."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from ketch import _core


def read_partitioned(partitions: list[int], reader: pa.RecordBatchReader) -> tuple[pa.Table, list[int]]:
    """A query's output (the partition of each batch, the batches) as a table and its rows per
    partition (an empty batch stands for an empty partition)."""
    batches = list(reader)
    rows: list[int] = []
    for partition, batch in zip(partitions, batches, strict=True):
        while len(rows) <= partition:
            rows.append(0)
        rows[partition] += batch.num_rows
    table = pa.Table.from_batches([b for b in batches if b.num_rows], schema=reader.schema)
    return table, rows or [0]


def start_udf_workers(plan: _core.PyPlan) -> None:
    """Starts the worker processes of every process-mode UDF in the plan now, all at once, so
    that chained UDF stages do not start theirs one after the other when their first batch
    arrives (their ``__init__`` runs while upstream stages work)."""
    for runner in plan.udf_runners():
        if getattr(runner, "actor_pool", None) is not None:
            continue  # its batches go to Ray actors (ketch.runners.ray.actor_pool)
        pool = getattr(runner, "process", None)
        if pool is not None:
            pool.start()


class NativeRunner:
    name = "native"

    def execute(
        self, optimized: _core.PyPlan, config: Any, stats: _core.ExecutionStats
    ) -> tuple[pa.Table, list[int]]:
        """Runs an optimized plan (``config``: the Python ExecutionConfig); returns the result and
        its rows per partition."""
        start_udf_workers(optimized)
        partitions, reader = optimized.execute(config.to_native(), stats)
        return read_partitioned(partitions, reader)

    def stream(
        self, optimized: _core.PyPlan, config: Any, stats: _core.ExecutionStats
    ) -> Iterator[tuple[list[int], pa.RecordBatchReader]]:
        """The output while the query runs: (partition of each batch, batches). Closing the
        iterator early cancels the query."""
        start_udf_workers(optimized)
        stream = optimized.execute_stream(config.to_native(), stats)
        try:
            while True:
                item = stream.next()
                if item is None:
                    return
                yield item
        finally:
            stream.close()

    def __repr__(self) -> str:
        return "NativeRunner()"
