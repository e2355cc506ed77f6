"""DataFrame.write_lance: fragments written by the query's tasks, then one commit on the driver.

Each task (a native worker, or a Ray engine worker) cuts its rows into batches of
``max_rows_per_file`` (``into_batches``, so an upstream UDF with a small batch size does not make
tiny fragments) and writes each batch with ``lance.fragment.write_fragments``; the fragments'
metadata come back as a column. The driver then commits them all in one Lance transaction
(``Append`` or ``Overwrite``): until that commit no reader sees any of it, and a failed query
commits nothing, so the dataset's previous version stays the latest.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ketch.errors import KetchValueError
from ketch.io.config import IOConfig
from ketch.io.lance import _import_lance, normalize_uri, storage_options

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame

DEFAULT_MAX_ROWS_PER_FILE = 1024 * 1024  # Lance's own default
DEFAULT_MAX_ROWS_PER_GROUP = 1024
# A fragment's rows are held in memory while it is written: by default a fragment holds at most
# about this many bytes (estimated from the schema), and at most Lance's row default.
DEFAULT_FRAGMENT_BYTES = 256 << 20
_VARIABLE_WIDTH_GUESS = {"binary": 4096, "string": 64, "list": 256, "image": 64 << 10}
_MODES = ("create", "append", "overwrite")


def _schema_text(schema: pa.Schema) -> str:
    return "{" + ", ".join(f"{f.name}: {f.type}" for f in schema) + "}"


def _same_schema(a: pa.Schema, b: pa.Schema) -> bool:
    return len(a) == len(b) and all(
        x.name == y.name and x.type.equals(y.type) for x, y in zip(a, b, strict=True)
    )


def _row_bytes(arrow_type: pa.DataType) -> int:
    """Bytes one value takes in memory: exact for fixed-width types, a guess for the others
    (decoded images are large, strings small)."""
    if isinstance(arrow_type, pa.BaseExtensionType):
        if "image" in getattr(arrow_type, "extension_name", "") and not pa.types.is_fixed_size_list(
            arrow_type.storage_type
        ):
            return _VARIABLE_WIDTH_GUESS["image"]
        return _row_bytes(arrow_type.storage_type)
    if pa.types.is_fixed_size_list(arrow_type):
        return arrow_type.list_size * _row_bytes(arrow_type.value_type)
    if pa.types.is_struct(arrow_type):
        return sum(_row_bytes(f.type) for f in arrow_type) or 1
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return _VARIABLE_WIDTH_GUESS["list"]
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return _VARIABLE_WIDTH_GUESS["binary"]
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return _VARIABLE_WIDTH_GUESS["string"]
    try:
        return max(1, arrow_type.bit_width // 8)
    except ValueError:
        return 8


def default_rows_per_file(schema: pa.Schema) -> int:
    """Rows per fragment when ``max_rows_per_file`` is not given: Lance's default (1,048,576),
    fewer when the schema's rows are wide, so a fragment being written holds about 256 MiB."""
    row = sum(_row_bytes(f.type) for f in schema) or 1
    return max(1, min(DEFAULT_MAX_ROWS_PER_FILE, DEFAULT_FRAGMENT_BYTES // row))


def _existing(uri: str, options: dict[str, str]) -> Any:
    """The dataset at ``uri`` (latest version), or None when there is none."""
    lance = _import_lance()
    try:
        return lance.dataset(uri, storage_options=options or None)
    except (ValueError, OSError, RuntimeError) as exc:
        text = str(exc).lower()
        if "not found" in text or "does not exist" in text:
            return None
        raise


def _fragment_writer(
    uri: str,
    names: list[str],
    schema: pa.Schema,
    write_mode: str,
    max_rows_per_file: int,
    max_rows_per_group: int,
    options: dict[str, str],
    kwargs: dict[str, Any],
) -> Any:
    """The batch UDF every task runs: writes its batch as Lance fragments (data files only, not
    committed) and returns their metadata as JSON in the batch's first row (null elsewhere)."""
    import ketch

    @ketch.func(batch=True, return_dtype=ketch.DataType.string(), batch_size=max_rows_per_file)
    def write_lance_fragments(*columns: Any) -> pa.Array:
        from lance.fragment import write_fragments

        arrays = [c.to_arrow() for c in columns]
        num_rows = len(arrays[0]) if arrays else 0
        table = pa.Table.from_arrays(arrays, names=names)
        if not table.schema.equals(schema):
            table = table.cast(schema)
        fragments = write_fragments(
            table,
            uri,
            schema=schema,
            mode=write_mode,
            max_rows_per_file=max_rows_per_file,
            max_rows_per_group=max_rows_per_group,
            storage_options=options or None,
            **kwargs,
        )
        payload = json.dumps([json.loads(_fragment_json(f)) for f in fragments])
        return pa.array([payload] + [None] * (num_rows - 1), pa.string())

    return write_lance_fragments


def _fragment_json(fragment: Any) -> str:
    text = fragment.to_json()
    return text if isinstance(text, str) else json.dumps(text)


def write_lance(
    df: DataFrame,
    uri: str | os.PathLike[str],
    mode: str = "create",
    io_config: IOConfig | None = None,
    schema: pa.Schema | None = None,
    max_rows_per_file: int | None = None,
    max_rows_per_group: int = DEFAULT_MAX_ROWS_PER_GROUP,
    **kwargs: Any,
) -> DataFrame:
    """See :meth:`ketch.DataFrame.write_lance`."""
    from ketch.dataframe import _materialized
    from ketch.expressions.expression import col

    lance = _import_lance()
    if mode not in _MODES:
        raise ValueError(f"write_lance: mode must be one of {_MODES}, got {mode!r}")
    if max_rows_per_file is None:
        max_rows_per_file = default_rows_per_file(
            schema if isinstance(schema, pa.Schema) else df._arrow_schema()
        )
    for name, value in (("max_rows_per_file", max_rows_per_file), ("max_rows_per_group", max_rows_per_group)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"write_lance: {name} must be a positive int, got {value!r}")
    options = storage_options(io_config)
    path = normalize_uri(uri)
    data_schema = df._arrow_schema()
    if schema is not None:
        if not isinstance(schema, pa.Schema):
            raise TypeError(f"write_lance: schema must be a pyarrow.Schema, got {type(schema).__name__}")
        if schema.names != data_schema.names:
            raise KetchValueError(
                f"write_lance: schema= has columns {schema.names}, the DataFrame has {data_schema.names}"
            )
        data_schema = schema
    existing = _existing(path, options)
    if mode == "create" and existing is not None:
        raise KetchValueError(
            f"write_lance: a Lance dataset already exists at '{path}' (version {existing.version}); "
            "use mode='append' or mode='overwrite'"
        )
    if mode == "append" and existing is not None and not _same_schema(existing.schema, data_schema):
        raise KetchValueError(
            f"write_lance(mode='append'): the DataFrame's schema {_schema_text(data_schema)} differs from "
            f"the schema of the Lance dataset at '{path}' {_schema_text(existing.schema)}"
        )
    # Fragments of an append reuse the dataset's field ids; others start a new schema.
    write_mode = "append" if mode == "append" and existing is not None else "overwrite"
    names = data_schema.names
    writer = _fragment_writer(
        path, names, data_schema, write_mode, max_rows_per_file, max_rows_per_group, options, dict(kwargs)
    )
    written = (
        df.into_batches(max_rows_per_file)
        .select(writer(*[col(n) for n in names]).alias("fragments"))
        .where(col("fragments").not_null())
        .to_arrow()
    )
    fragments = []
    for payload in written.column("fragments").to_pylist():
        for meta in json.loads(payload):
            fragments.append(lance.FragmentMetadata.from_json(json.dumps(meta)))
    # The one commit: nothing the tasks wrote is visible before it.
    if mode == "append" and existing is not None:
        operation = lance.LanceOperation.Append(fragments)
        read_version = existing.version
    else:
        operation = lance.LanceOperation.Overwrite(data_schema, fragments)
        read_version = existing.version if existing is not None else None
    committed = lance.LanceDataset.commit(
        path, operation, read_version=read_version, storage_options=options or None
    )
    stats = committed.stats.dataset_stats()
    result = pa.table(
        {
            "num_fragments": pa.array([int(stats["num_fragments"])], pa.int64()),
            "num_deleted_rows": pa.array([int(stats["num_deleted_rows"])], pa.int64()),
            "num_small_files": pa.array([int(stats["num_small_files"])], pa.int64()),
            "version": pa.array([int(committed.version)], pa.int64()),
            "num_rows_written": pa.array([sum(f.physical_rows for f in fragments)], pa.int64()),
        }
    )
    return _materialized(result)
