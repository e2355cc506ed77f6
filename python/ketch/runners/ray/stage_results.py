"""The results of a query on Ray (``StageResults``, part of ``QueryStages``): waiting for a
stage's tasks, gathering their outputs in task order (with an early stop for a limit), streaming
into_partitions / into_batches cuts as slices of the objects, and the final tables the driver
yields."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from ketch.runners.ray.stage_tasks import Pending
from ketch.runners.ray.tables import concat


class StageResults:
    """The result methods of ``QueryStages`` (stages.py)."""

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
