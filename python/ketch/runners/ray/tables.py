"""Arrow tables between the driver and the engine workers, tables without columns included.

pyarrow loses the row count of a table without columns (what ``count_rows()`` and ``select()``
make) when the table is pickled, as Ray's object store does, and in ``pa.concat_tables``.
``register_serializer()`` (called once per process: the driver, each engine worker) gives Ray a
serializer for ``pa.Table`` that keeps it, and ``concat`` concatenates keeping it. Tables with
columns travel as before: schema and record batches, their buffers out of band."""

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


def _serialize(table: pa.Table) -> tuple[pa.Schema, list[pa.RecordBatch], int]:
    return table.schema, table.to_batches(), table.num_rows


def _deserialize(state: tuple[pa.Schema, list[pa.RecordBatch], int]) -> pa.Table:
    schema, batches, num_rows = state
    if len(schema) == 0:
        return without_columns(num_rows)
    return pa.Table.from_batches(batches, schema=schema)


def register_serializer() -> None:
    """Makes this process's Ray serialize ``pa.Table`` with its row count (after ``ray.init``)."""
    import ray.util

    ray.util.register_serializer(pa.Table, serializer=_serialize, deserializer=_deserialize)
