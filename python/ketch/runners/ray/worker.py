"""The engine worker: one long-lived Ray actor per node that runs plan fragments (serialized
optimized logical plans, ``PyPlan.to_bytes``) on Ketch's native executor and returns their output
as Arrow tables through Ray's object store (pyarrow buffers travel without a copy on one node).

A task is a fragment plus, for the stages above the first, its input partitions: object refs of
Arrow tables that other tasks left in the object store (the fragment's leaves are empty
placeholders, filled here in leaf order). A shuffle map task also hash-partitions its output into
N buckets and returns them as N separate objects, so a reduce task fetches only its bucket, from
the node that made it, never through the driver. With the flight shuffle the buckets go to local
disk instead and are served by the worker's Arrow Flight server (flight_shuffle.py): the map task
returns only metadata and reduce tasks fetch their bucket over Flight."""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa


def _fill_leaves(plan: Any, inputs: list[Any]) -> Any:
    """``plan`` with its leaves (in depth-first, left-to-right order) replaced by in-memory
    sources over ``inputs[k]`` (tables concatenated, one partition), or by ``inputs[k]`` itself
    when it is a plan (a split row group's partitions, split_reads.py); a None keeps leaf k."""
    from ketch import _core
    from ketch.runners.ray.tables import concat

    remaining = iter(inputs)

    def fill(node: Any) -> Any:
        children = node.inputs()
        if not children:
            tables = next(remaining)
            if tables is None:
                return node
            if isinstance(tables, _core.PyPlan):
                return tables
            schema = node.schema()
            table = concat(tables, schema)
            return _core.PyPlan.in_memory(table)
        return node.with_inputs([fill(child) for child in children])

    return fill(plan)


def _fetch(items: list[Any], store: Any = None) -> list[pa.Table]:
    """The tables of one leaf: each item is an object ref of a table, or a slice of one as
    (ref, offset, length) in rows (into_partitions / into_batches / limit cut tables so), or a
    flight shuffle piece (``FlightPiece``, fetched with ``store``, a ``ShuffleStore``)."""
    import ray

    from ketch.runners.ray.flight_shuffle import FlightPiece

    pieces = [item for item in items if isinstance(item, FlightPiece)]
    if pieces:
        if len(pieces) != len(items):
            raise ValueError("a leaf mixes flight shuffle pieces and object refs")
        return store.fetch(pieces)
    refs = [item[0] if isinstance(item, tuple) else item for item in items]
    tables = ray.get(refs)
    return [
        table.slice(item[1], item[2]) if isinstance(item, tuple) else table
        for item, table in zip(items, tables, strict=True)
    ]


def _raise_udf_error(error: BaseException) -> None:
    """A UDF's failure (a native error carrying the UDF's token; the original exception is kept
    in this process) as the UDFError the native runner raises, its original exception also kept
    as ``udf_cause``: an attribute travels to the driver with the pickled error, ``__cause__``
    does not; its traceback does (tblib's pickling support). Returns when ``error`` is not a
    UDF's."""
    import cloudpickle
    from tblib import pickling_support

    from ketch.errors import UDFError
    from ketch.udf.errors import reraise_udf_error

    try:
        reraise_udf_error(error)
    except UDFError as udf_error:
        try:
            pickling_support.install(udf_error.__cause__)  # its frames travel with it
            cloudpickle.dumps(udf_error.__cause__)
            udf_error.udf_cause = udf_error.__cause__
        except Exception:  # noqa: BLE001 - an unpicklable exception: the message says what it was
            pass
        raise


class EngineWorker:
    """Wrapped by ``ray.remote`` in the runner (so this module imports without Ray). Reserves no
    CPU of its own in Ray's accounting: the native executor sizes its thread pools to the node."""

    def __init__(self) -> None:
        import ketch  # noqa: F401  (loads the native module once per worker)
        from ketch.runners.ray.tables import register_serializer

        register_serializer()  # tables without columns keep their rows

        self.tasks_run = 0
        self._store: Any = None  # the flight shuffle's files and server, on first use

    def shuffle_store(self) -> Any:
        """This worker's ``ShuffleStore`` (flight_shuffle.py), made on first use."""
        if self._store is None:
            import ray

            from ketch.runners.ray.flight_shuffle import ShuffleStore

            node_id = ray.get_runtime_context().get_node_id()
            self._store = ShuffleStore(ray.util.get_node_ip_address(), f"{node_id[:12]}-{os.getpid()}")
        return self._store

    def drop_query(self, query_id: str, dirs: list[str]) -> None:
        """Deletes the flight shuffle files of query ``query_id`` under ``dirs`` on this node."""
        self.shuffle_store().drop_query(query_id, dirs)

    def info(self) -> dict[str, Any]:
        import ray

        return {"node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}

    def run_task(
        self,
        fragment: bytes,
        config: Any,
        inputs: list[list[Any]] | None,
        buckets: int,
        keys: list[str] | None,
        flight: Any = None,
        outputs: int = 1,
    ) -> Any:
        """Runs one task. ``fragment``: the plan's bytes; ``config``: the driver's ExecutionConfig;
        ``inputs``: None (the fragment reads its own source) or, per leaf of the fragment, the refs
        of the tables to read there, or slices of them as (ref, offset, length) (None: the leaf
        reads its own source), or a ``SourcePartitions`` (a split row group's partitions, read by
        another task: split_reads.py). ``buckets`` = 0:
        returns (output table, metadata); ``buckets`` = N > 0: the output hash-partitioned by
        ``keys`` into N buckets, returned as (table of bucket 0, ..., table of bucket N-1,
        metadata); with ``outputs`` = K > 1 (and no buckets; a fragment of K partitions, e.g. the
        row ranges of one split row group): its K output partitions, in order, as (table of
        partition 0, ..., table of partition K-1, metadata).
        Metadata: {"rows": [...], "bytes": [...]} per returned table, "node_id",
        "scan" (``ExecutionStats.scan`` of the task).
        With ``flight`` (a ``FlightMap``) and N buckets, the buckets are written to local disk
        and only the metadata is returned (``ShuffleStore.write_buckets``: also "flight", the
        address serving them, and "file_bytes"). Raises the engine's error (KetchError and
        subclasses) unchanged; a flight piece that cannot be fetched raises KetchIOError naming
        its address."""
        import ray

        from ketch import _core
        from ketch.errors import KetchError
        from ketch.runners.native import start_udf_workers
        from ketch.runners.ray.flight_shuffle import FlightPiece
        from ketch.runners.ray.split_reads import SourcePartitions

        plan = _core.PyPlan.from_bytes(fragment)
        if inputs is not None:
            store = self._store
            lists = [refs for refs in inputs if isinstance(refs, list)]
            if any(isinstance(item, FlightPiece) for refs in lists for item in refs):
                store = self.shuffle_store()
            plan = _fill_leaves(
                plan,
                [
                    None
                    if refs is None
                    else refs.plan()
                    if isinstance(refs, SourcePartitions)
                    else _fetch(refs, store)
                    for refs in inputs
                ],
            )
        if buckets > 0:
            plan = plan.repartition(buckets, list(keys or []))
        start_udf_workers(plan)
        stats = _core.ExecutionStats()
        try:
            partitions, reader = plan.execute(config.to_native(), stats)
            batches = list(reader)
        except KetchError as error:
            _raise_udf_error(error)
            raise
        schema = reader.schema
        if buckets > 0:
            per_bucket: list[list[pa.RecordBatch]] = [[] for _ in range(buckets)]
            for partition, batch in zip(partitions, batches, strict=True):
                if batch.num_rows:
                    per_bucket[partition].append(batch)
            tables = [pa.Table.from_batches(b, schema=schema) for b in per_bucket]
        elif outputs > 1:
            # The executor's output partitions (batch by batch, in order: the partitions never
            # interleave), one table each.
            per_partition: list[list[pa.RecordBatch]] = [[] for _ in range(outputs)]
            for partition, batch in zip(partitions, batches, strict=True):
                if batch.num_rows:
                    per_partition[min(partition, outputs - 1)].append(batch)
            tables = [pa.Table.from_batches(b, schema=schema) for b in per_partition]
        else:
            tables = [pa.Table.from_batches([b for b in batches if b.num_rows], schema=schema)]
        self.tasks_run += 1
        if flight is not None and buckets > 0:
            meta = self.shuffle_store().write_buckets(flight, tables)
            meta["node_id"] = ray.get_runtime_context().get_node_id()
            meta["scan"] = stats.scan
            return meta
        meta = {
            "rows": [t.num_rows for t in tables],
            "bytes": [t.nbytes for t in tables],
            "node_id": ray.get_runtime_context().get_node_id(),
            "scan": stats.scan,  # what its scans read and pruned (merged into the driver's stats)
        }
        return (*tables, meta)

    def pid(self) -> int:
        return os.getpid()

    # -- the distributed sort (sort_stage.py) ------------------------------------------------------
    def run_sample_task(
        self, fragment: bytes, config: Any, inputs: list[list[Any]] | None, columns: list[str], rows: int
    ) -> tuple[Any, ...]:
        """``run_task`` without buckets; its metadata also holds "sample": at most ``rows``
        random rows of the output's ``columns`` (a pyarrow Table)."""
        from ketch.runners.ray.sort_stage import sample_task

        return sample_task(self, fragment, config, inputs, columns, rows)

    def run_range_partition_task(
        self,
        table: pa.Table,
        columns: list[str],
        descending: list[bool],
        nulls_first: list[bool],
        boundaries: pa.Table,
        buckets: int,
    ) -> tuple[Any, ...]:
        """``table`` split into ``buckets`` sort ranges by ``boundaries``: (range 0, ..., range
        N-1, metadata), as ``sort_stage.range_partition_task``."""
        from ketch.runners.ray.sort_stage import range_partition_task

        self.tasks_run += 1
        return range_partition_task(table, columns, descending, nulls_first, boundaries, buckets)
