"""The write options Daft's writers take beyond the files themselves: ``single_file=True``,
``write_success_file=True`` and the CSV/JSON ``date_format`` / ``timestamp_format``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ketch.errors import KetchIOError
from ketch.io.write_commit import Staging, drop_bookkeeping

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame
    from ketch.io.config import S3Config

SUCCESS_FILE = "_SUCCESS"


def formatted_temporals(df: DataFrame, date_format: str | None, timestamp_format: str | None) -> DataFrame:
    """``df`` with its top-level date columns rendered with ``date_format`` and timestamp columns
    with ``timestamp_format`` (strftime specifiers, as Daft's chrono formats: ``%d/%m/%Y``)."""
    from ketch.expressions.expression import col

    if date_format is None and timestamp_format is None:
        return df
    for name, value in (("date_format", date_format), ("timestamp_format", timestamp_format)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    changed = {}
    for field in df._arrow_schema():
        if date_format is not None and pa.types.is_date(field.type):
            changed[field.name] = col(field.name).dt.strftime(date_format)
        elif timestamp_format is not None and pa.types.is_timestamp(field.type):
            changed[field.name] = col(field.name).dt.strftime(timestamp_format)
    return df.with_columns(changed) if changed else df


def write_single_file(
    df: DataFrame, fmt: str, target: str, compression: str, s3: S3Config | None, s3_options: dict[str, str]
) -> DataFrame:
    """Writes every row into one file at ``target`` itself (Daft's ``single_file=True``): the rows
    are coalesced into one partition, written into a hidden staging directory beside ``target``
    and moved into place in one rename (an existing file there is replaced, as Daft does).
    Returns the one-row DataFrame ``{"path": [target]}``."""
    from ketch.dataframe import _materialized

    caller = f"write_{fmt}"
    if not target.startswith("s3://") and os.path.isdir(target):
        raise KetchIOError(f"{caller}: single_file=True needs a file path, but '{target}' is a directory")
    parent = target.rsplit("/", 1)[0] if target.startswith("s3://") else os.path.dirname(target)
    staging = Staging(parent, caller, s3)
    try:
        plan = df.into_partitions(1)._plan.write(staging.dir, fmt, compression.lower(), [], s3_options)
        table = drop_bookkeeping(df._execute(plan))
        staged = table.column("path").to_pylist()
        if len(staged) != 1:
            raise KetchIOError(f"{caller}: single_file=True wrote {len(staged)} files, expected one")
        try:
            staging._move(staged[0], target)
        except OSError as error:
            raise staging._error("could not commit its file", target, error) from None
    finally:
        staging.close()
    return _materialized(pa.table({"path": pa.array([target], pa.string())}))


def write_success_marker(root: str, caller: str, s3: S3Config | None) -> None:
    """An empty ``_SUCCESS`` file in ``root`` once the write committed (Spark's and Daft's marker)."""
    path = f"{root}/{SUCCESS_FILE}"
    try:
        if root.startswith("s3://"):
            from ketch.io.config import S3Config as _S3Config

            fs = (s3 or _S3Config()).to_filesystem()
            with fs.open_output_stream(path[len("s3://") :]):
                pass
        else:
            with open(path, "wb"):
                pass
    except OSError as error:
        raise KetchIOError(f"{caller}: cannot write '{path}': {error.strerror or error}") from None


def check_unsupported(caller: str, **options: Any) -> None:
    """KetchNotImplementedError naming a Daft writer option Ketch does not implement yet."""
    from ketch.errors import KetchNotImplementedError

    for name, value in options.items():
        if value not in (None, False):
            raise KetchNotImplementedError(f"{caller}: {name}= is not supported yet (got {value!r})")
