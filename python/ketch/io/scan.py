"""read_parquet, read_csv and read_json: lazy scans of files with filter, column and limit pushdown
into the readers, hive partitioning and schema hints. What the three share lives here; the native
scan (``ScanSource``) reads the files when the query runs."""

from __future__ import annotations

import os
import re
import urllib.parse
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ketch import _core
from ketch.errors import KetchFileNotFoundError, KetchValueError
from ketch.io.config import IOConfig
from ketch.io.paths import expand_paths

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame
    from ketch.datatype import DataType

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
_SUFFIXES = {"parquet": (".parquet",), "csv": (".csv", ".tsv"), "json": (".json", ".jsonl", ".ndjson")}


def _root_of(entry: str) -> str:
    """The directory an entry names files under (hive partitions are read below it): the entry
    itself for a directory, the part before the first glob character, or a file's directory."""
    cut = min((entry.index(c) for c in "*?[" if c in entry), default=-1)
    if cut >= 0:
        return entry[:cut].rsplit("/", 1)[0] + "/"
    if entry.startswith("s3://"):
        return entry if entry.endswith("/") else entry.rsplit("/", 1)[0] + "/"
    entry = os.path.abspath(entry)
    return entry + os.sep if os.path.isdir(entry) else os.path.dirname(entry) + os.sep


def list_files(
    path: str | os.PathLike[str] | list, fmt: str, io_config: IOConfig | None, caller: str
) -> tuple[list[str], list[int], list[str]]:
    """The files (their sizes in bytes, and the part of each path below the entry that named it)
    named by paths, directories, globs or s3:// URLs, in order. ``KetchFileNotFoundError`` names
    an entry that matches nothing."""
    from ketch.io.files import _list_s3

    entries = path if isinstance(path, list) else [path]
    if not entries:
        raise ValueError(f"{caller} needs at least one path, got an empty list")
    files: list[str] = []
    sizes: list[int] = []
    relative: list[str] = []
    for entry in entries:
        entry = os.fspath(entry)
        if entry.startswith("s3://"):
            root = _root_of(entry)
            try:
                listed = _list_s3(entry, io_config)
            except KetchFileNotFoundError as exc:
                raise KetchFileNotFoundError(f"{caller}: {exc}") from None
            for p, size in listed:
                if entry.endswith("/") and not p.endswith(_SUFFIXES[fmt]):
                    continue
                files.append(p)
                sizes.append(size)
                relative.append(p[len(root) :] if p.startswith(root) else p)
            continue
        local = entry[len("file://") :] if entry.startswith("file://") else entry
        local = local[len("localhost") :] if local.startswith("localhost/") else local
        root = os.path.abspath(_root_of(local)) + os.sep
        for f in expand_paths(entry, _SUFFIXES[fmt], caller=caller):  # type: ignore[arg-type]
            files.append(f)
            sizes.append(os.stat(f).st_size)
            relative.append(f[len(root) :] if f.startswith(root) else f)
    if not files:
        raise KetchFileNotFoundError(f"{caller}: {path!r} matched no files")
    return files, sizes, relative


def _partition_values(path: str) -> dict[str, str | None]:
    """``key=value`` directory names of a path (Hive style), URL-decoded; the Hive null marker and
    empty values are None."""
    out: dict[str, str | None] = {}
    for segment in path.replace("s3://", "", 1).split("/")[:-1]:
        if "=" in segment:
            key, value = segment.split("=", 1)
            value = urllib.parse.unquote(value)
            out[urllib.parse.unquote(key)] = None if value in ("", HIVE_NULL) else value
    return out


_INT = re.compile(r"[+-]?[0-9]+\Z")


def _parse_int(value: str) -> int:
    """An int64 written in ASCII decimal digits; Python's ``int`` alone would also take
    ``1_000``, surrounding whitespace and non-ASCII digits, and values past int64."""
    if not _INT.match(value):
        raise ValueError(value)
    number = int(value)
    if not -(2**63) <= number < 2**63:
        raise ValueError(value)
    return number


def _parse_float(value: str) -> float:
    """A number as ``float`` reads it, except for ``_`` separators, whitespace and non-ASCII."""
    if "_" in value or value != value.strip() or not value.isascii():
        raise ValueError(value)
    return float(value)


def _infer_partition_column(values: list[str | None]) -> pa.Array:
    """int64 when every value is an integer, float64 when every one is a number, else string."""
    present = [v for v in values if v is not None]
    for arrow_type, parse in ((pa.int64(), _parse_int), (pa.float64(), _parse_float)):
        try:
            parsed = [None if v is None else parse(v) for v in values]
        except ValueError:
            continue
        if present:
            return pa.array(parsed, arrow_type)
    return pa.array(values, pa.string())


def hive_partitions(files: list[str], relative: list[str], caller: str) -> pa.Table:
    """One row per file with its partition values, read from the part of its path below the
    directory or glob base it was named by (as Daft does); every file must have the same keys."""
    parsed = [_partition_values(f) for f in relative]
    keys = list(parsed[0])
    for f, values in zip(files, parsed, strict=True):
        if list(values) != keys:
            raise KetchValueError(
                f"{caller}(hive_partitioning=True): '{f}' has partition keys {list(values)}, "
                f"but '{files[0]}' has {keys}"
            )
    return pa.table({k: _infer_partition_column([p[k] for p in parsed]) for k in keys})


def _arrow_schema(schema: dict[str, DataType | pa.DataType] | None, arg: str) -> pa.Schema | None:
    if schema is None:
        return None
    if not isinstance(schema, dict):
        raise TypeError(f"{arg} must be a dict of column name -> DataType, got {type(schema).__name__}")
    fields = []
    for name, dtype in schema.items():
        arrow_type = dtype if isinstance(dtype, pa.DataType) else getattr(dtype, "to_arrow", lambda: None)()
        if arrow_type is None:
            raise TypeError(f"{arg}[{name!r}] must be a ketch DataType, got {dtype!r}")
        fields.append(pa.field(name, arrow_type))
    return pa.schema(fields)


def scan(
    fmt: str,
    path: Any,
    *,
    caller: str,
    infer_schema: bool = True,
    schema: dict | None = None,
    schema_hints: dict | None = None,
    hive_partitioning: bool = False,
    io_config: IOConfig | None = None,
    options: dict[str, str] | None = None,
    columns: list[str] | None = None,
) -> DataFrame:
    from ketch.dataframe import DataFrame

    if io_config is not None and not isinstance(io_config, IOConfig):
        raise TypeError(f"io_config must be a ketch.io.IOConfig, got {type(io_config).__name__}")
    if not infer_schema and schema is None:
        raise ValueError(f"{caller}(infer_schema=False) needs schema=")
    files, sizes, relative = list_files(path, fmt, io_config, caller)
    partitions = hive_partitions(files, relative, caller) if hive_partitioning else None
    if partitions is not None and partitions.num_columns == 0:
        partitions = None
    full = _arrow_schema(schema, "schema") if not infer_schema else None
    hints = _arrow_schema(
        schema if infer_schema else schema_hints, "schema" if infer_schema else "schema_hints"
    )
    if infer_schema and schema_hints is not None:
        extra = _arrow_schema(schema_hints, "schema_hints")
        if hints is not None:
            for field in extra:
                i = hints.get_field_index(field.name)
                if i >= 0 and not hints.field(i).type.equals(field.type):
                    raise KetchValueError(
                        f"{caller}: schema and schema_hints give column {field.name!r} different types "
                        f"({hints.field(i).type} and {field.type})"
                    )
        hints = extra if hints is None else pa.unify_schemas([hints, extra])
    s3 = (io_config or IOConfig()).s3.to_options()
    plan = _core.PyPlan.scan(fmt, files, sizes, options or {}, full, hints, partitions, s3)
    df = DataFrame(plan)
    if columns is not None:
        if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
            raise TypeError(f"{caller}: columns must be a list of column names, got {columns!r}")
        df = df.select(*columns)  # the optimizer pushes this into the scan
    return df


def read_parquet(
    path: str | os.PathLike[str] | list,
    infer_schema: bool = True,
    schema: dict | None = None,
    io_config: IOConfig | None = None,
    hive_partitioning: bool = False,
    schema_hints: dict | None = None,
    columns: list[str] | None = None,
) -> DataFrame:
    """A lazy DataFrame over Parquet files: a path, a directory (its ``*.parquet`` files,
    recursively), a glob (``data/*.parquet``, ``**`` recursive), an ``s3://`` URL or glob (with
    ``io_config``), or a list of them. The schema comes from the first file's footer; nothing else
    is read until the query runs, and then only the columns, row groups and rows it needs:
    filters are evaluated inside the scan and row groups whose min/max statistics rule the filter
    out are skipped; a ``limit`` stops reading early.

    - ``schema`` / ``schema_hints``: ``{column: DataType}``; with ``infer_schema=True`` these types
      override the files' (values are cast; a value that does not convert fails the query naming
      the file and column); with ``infer_schema=False`` ``schema`` is taken as the files' schema.
    - ``hive_partitioning``: ``key=value`` directories below the directory or glob base become
      columns (int64, float64 or string); filters on them drop whole files before any is opened.
    - ``columns``: read only these columns, in this order (the same as ``.select(*columns)``).

    Errors: ``KetchFileNotFoundError`` when a path or glob matches nothing; ``KetchIOError`` naming
    the file when it is not valid Parquet (or is truncated).
    """
    return scan(
        "parquet",
        path,
        caller="read_parquet",
        infer_schema=infer_schema,
        schema=schema,
        schema_hints=schema_hints,
        hive_partitioning=hive_partitioning,
        io_config=io_config,
        columns=columns,
    )


def _char(value: str | None, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) != 1:
        raise ValueError(f"read_csv: {name} must be a single character, got {value!r}")
    return value


def read_csv(
    path: str | os.PathLike[str] | list,
    infer_schema: bool = True,
    schema: dict | None = None,
    has_headers: bool = True,
    delimiter: str | None = None,
    double_quote: bool = True,
    quote: str | None = None,
    escape_char: str | None = None,
    comment: str | None = None,
    allow_variable_columns: bool = False,
    io_config: IOConfig | None = None,
    hive_partitioning: bool = False,
    schema_hints: dict | None = None,
    columns: list[str] | None = None,
) -> DataFrame:
    """A lazy DataFrame over CSV files (paths, directories of ``*.csv``/``*.tsv``, globs, ``s3://``).
    Types are inferred by Arrow's CSV reader from the first file's first MiB (int64, float64,
    bool, date32, timestamp, string); ``schema``/``schema_hints`` override them. Empty fields are
    null. ``has_headers=False`` names the columns ``column_1``, ``column_2``, ... Options:
    ``delimiter`` (default ``,``), ``quote`` (default ``"``), ``escape_char`` (none by default),
    ``double_quote`` (``""`` inside quotes is one quote), ``allow_variable_columns`` (short rows
    padded with nulls, extra fields dropped; otherwise such a row fails the query naming the file
    and row). Filters, column selection and limits are pushed into the reader; files are never
    split, small ones are merged into one scan task (up to ``scan_tasks_min_size_bytes``, at most
    ``max_sources_per_scan_task`` files). ``comment`` is not supported (Arrow's CSV reader has no
    comment lines).
    """
    from ketch.errors import KetchNotImplementedError

    if comment is not None:
        raise KetchNotImplementedError(
            "read_csv(comment=...) is not supported: Arrow's CSV reader has no comments"
        )
    options = {
        "has_header": "true" if has_headers else "false",
        "delimiter": _char(delimiter, "delimiter") or ",",
        "quote": _char(quote, "quote") or '"',
        "escape": _char(escape_char, "escape_char"),
        "double_quote": "true" if double_quote else "false",
        "allow_variable_columns": "true" if allow_variable_columns else "false",
    }
    return scan(
        "csv",
        path,
        caller="read_csv",
        infer_schema=infer_schema,
        schema=schema,
        schema_hints=schema_hints,
        hive_partitioning=hive_partitioning,
        io_config=io_config,
        options=options,
        columns=columns,
    )


def read_json(
    path: str | os.PathLike[str] | list,
    infer_schema: bool = True,
    schema: dict | None = None,
    io_config: IOConfig | None = None,
    hive_partitioning: bool = False,
    schema_hints: dict | None = None,
    columns: list[str] | None = None,
) -> DataFrame:
    """A lazy DataFrame over newline-delimited JSON files (one object per line; paths,
    directories of ``*.json``/``*.jsonl``/``*.ndjson``, globs, ``s3://``). Types are inferred by
    Arrow's JSON reader from the first file's first MiB (int64, float64, bool, string, list,
    struct); ``schema``/``schema_hints`` override them; fields not in the schema are ignored. A
    line that is not JSON fails the query naming the file. Filters, column selection and limits
    are pushed into the reader."""
    return scan(
        "json",
        path,
        caller="read_json",
        infer_schema=infer_schema,
        schema=schema,
        schema_hints=schema_hints,
        hive_partitioning=hive_partitioning,
        io_config=io_config,
        columns=columns,
    )
