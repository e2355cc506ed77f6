"""Arrow tables between the driver and the engine workers: Ketch's extension types (images,
embeddings, ...) and tables without columns included.

Pickling a table (what Ray's object store does by default) fails on Ketch's extension types
(pyarrow pickles a type by its alias: "No type alias for image[mixed]") and loses the row count
of a table without columns (what ``count_rows()`` and ``select()`` make); ``pa.concat_tables``
loses that row count too. ``register_serializer()`` (called once per process: the driver, each
engine worker) has Ray serialize ``pa.Table`` as an Arrow IPC stream (extension types travel by
name, rebuilt from Arrow's registry where Ketch is imported; read back without a copy from the
object store) plus its row count; ``concat`` concatenates keeping the row count."""

from __future__ import annotations

import pyarrow as pa


def without_columns(num_rows: int) -> pa.Table:
    """A table of ``num_rows`` rows and no columns."""
    batch = pa.RecordBatch.from_arrays([pa.nulls(num_rows)], names=["_"]).select([])
    return pa.Table.from_batches([batch])


def concat(tables: list[pa.Table], schema: pa.Schema) -> pa.Table:
    """``tables`` (all of ``schema``) as one table; an empty list gives an empty table."""
    if len(schema) == 0:
        return without_columns(sum(t.num_rows for t in tables))
    return pa.concat_tables(tables) if tables else schema.empty_table()


def _serialize(table: pa.Table) -> tuple[pa.Buffer, int]:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue(), table.num_rows


def _deserialize(state: tuple[pa.Buffer, int]) -> pa.Table:
    stream, num_rows = state
    table = pa.ipc.open_stream(stream).read_all()
    if table.num_columns == 0:
        return without_columns(num_rows)
    return table


def register_serializer() -> None:
    """Makes this process's Ray serialize ``pa.Table`` with its row count (after ``ray.init``)."""
    import ray.util

    ray.util.register_serializer(pa.Table, serializer=_serialize, deserializer=_deserialize)
