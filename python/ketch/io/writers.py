"""write_parquet, write_csv and write_json (Daft's signatures): what the three share."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ketch.errors import KetchIOError, KetchNotImplementedError
from ketch.io.config import IOConfig
from ketch.io.write_commit import Staging, drop_bookkeeping, replace_others

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame

WRITE_MODES = ("append", "overwrite", "overwrite-partitions")


def _root(root_dir: str | os.PathLike[str], caller: str) -> str:
    root = os.fspath(root_dir)
    if root.startswith("s3://"):
        if len(root.rstrip("/")) <= len("s3://"):
            raise ValueError(f"{caller}: {root!r} names no bucket")
        return root.rstrip("/")
    if "://" in root and not root.startswith("file://"):
        raise KetchNotImplementedError(
            f"{caller}: only local paths and s3:// URLs can be written, got {root.split('://')[0]}://"
        )
    root = root[len("file://") :] if root.startswith("file://") else root
    return os.path.abspath(root)


def _partition_names(df: DataFrame, partition_cols: list[Any] | None) -> tuple[DataFrame, list[str]]:
    """The partition columns' names; expressions that are not plain columns are computed first
    (as columns named like the expression)."""
    from ketch.expressions.expression import Expression

    names: list[str] = []
    computed: dict[str, Expression] = {}
    for c in partition_cols or []:
        if isinstance(c, str):
            names.append(c)
        elif isinstance(c, Expression):
            names.append(c.name())
            if not c._native.is_column():
                computed[c.name()] = c
        else:
            raise TypeError(f"partition_cols must be column names or expressions, got {type(c).__name__}")
    if computed:
        df = df.with_columns(computed)
    return df, names


def write_files(
    df: DataFrame,
    fmt: str,
    root_dir: str | os.PathLike[str],
    write_mode: str,
    partition_cols: list[Any] | None,
    io_config: IOConfig | None,
    compression: str = "snappy",
    *,
    single_file: bool = False,
    write_success_file: bool = False,
    date_format: str | None = None,
    timestamp_format: str | None = None,
) -> DataFrame:
    """Runs ``df`` into ``fmt`` files under ``root_dir`` (see DataFrame.write_parquet)."""
    from ketch.dataframe import _materialized
    from ketch.io import write_options
    from ketch.runners import get_runner

    caller = f"write_{fmt}"
    if write_mode not in WRITE_MODES:
        raise ValueError(
            f"Only support `append`, `overwrite`, or `overwrite-partitions` mode. {write_mode} is unsupported"
        )
    if write_mode == "overwrite-partitions" and not partition_cols:
        raise ValueError("Partition columns must be specified to use `overwrite-partitions` mode.")
    if io_config is not None and not isinstance(io_config, IOConfig):
        raise TypeError(f"io_config must be a ketch.io.IOConfig, got {type(io_config).__name__}")
    if not isinstance(compression, str):
        raise TypeError(f"compression must be a string, got {type(compression).__name__}")
    root = _root(root_dir, caller)
    remote = root.startswith("s3://")
    s3 = (io_config or IOConfig()).s3 if remote else None
    s3_options = {k: str(v) for k, v in s3.to_options().items()} if s3 is not None else {}
    df = write_options.formatted_temporals(df, date_format, timestamp_format)
    if single_file:
        if partition_cols:
            raise ValueError("`single_file=True` cannot be combined with `partition_cols`.")
        return write_options.write_single_file(df, fmt, root, compression, s3, s3_options)
    df, names = _partition_names(df, partition_cols)
    # Staged (then committed here): S3 writes and the Ray runner's; the native runner's local
    # files are committed by the sink itself.
    staging = Staging(root, caller, s3) if remote or get_runner().name == "ray" else None
    try:
        plan = df._plan.write(staging.dir if staging else root, fmt, compression.lower(), names, s3_options)
        table = df._execute(plan)
        if staging is not None:
            table = staging.commit(table)
    except KetchIOError as error:
        # Name the user's destination, not the hidden staging location the bytes went to first.
        if staging is not None and staging.dir in str(error):
            raise type(error)(staging.unstaged(str(error))) from None
        raise
    finally:
        if staging is not None:
            staging.close()
    if write_mode != "append":
        replace_others(root, table.column("path").to_pylist(), write_mode, caller, s3)
    if write_success_file:
        write_options.write_success_marker(root, caller, s3)
    return _materialized(drop_bookkeeping(table))
