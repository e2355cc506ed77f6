"""read_parquet: a lazy scan of Parquet files, with filter and column pushdown into the reader."""

from __future__ import annotations

import glob
import os
from typing import TYPE_CHECKING, Any

from ketch import _core
from ketch.errors import KetchFileNotFoundError, KetchNotImplementedError

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame

_GLOB_CHARS = set("*?[")


def expand_paths(path: str | os.PathLike[str] | list[str | os.PathLike[str]], suffix: str) -> list[str]:
    """Files named by a path, a directory (its ``*suffix`` files, recursively), a glob, or a list of
    those, in sorted order within each entry. ``KetchFileNotFoundError`` names an entry that matched
    nothing."""
    entries = path if isinstance(path, list) else [path]
    if not entries:
        raise ValueError("read_parquet needs at least one path, got an empty list")
    files: list[str] = []
    for entry in entries:
        entry = os.fspath(entry)
        if "://" in entry:
            scheme, rest = entry.split("://", 1)
            if scheme != "file":
                raise KetchNotImplementedError(f"'{scheme}://' paths are not supported yet: {entry}")
            entry = rest
        if any(c in _GLOB_CHARS for c in entry):
            matched = sorted(p for p in glob.glob(entry, recursive=True) if os.path.isfile(p))
        elif os.path.isdir(entry):
            matched = sorted(glob.glob(os.path.join(entry, "**", f"*{suffix}"), recursive=True))
        elif os.path.isfile(entry):
            matched = [entry]
        else:
            raise KetchFileNotFoundError(f"no such file or directory: '{entry}'")
        if not matched:
            raise KetchFileNotFoundError(f"'{entry}' matched no files")
        files.extend(os.path.abspath(p) for p in matched)
    return files


def read_parquet(path: str | list[str], io_config: Any = None, **options: Any) -> DataFrame:
    """A lazy DataFrame over Parquet files: a path, a directory, a glob (``data/*.parquet``,
    ``**`` recursive) or a list of them. The schema comes from the first file's footer; nothing
    else is read until the query runs, and then only the columns and rows it needs.

    Errors: ``KetchFileNotFoundError`` when a path or glob matches nothing; ``KetchIOError`` naming
    the file when it is not valid Parquet.
    """
    from ketch.dataframe import DataFrame

    if io_config is not None:
        raise KetchNotImplementedError("io_config (S3, HTTP) arrives with the object-store issue")
    if options:
        raise KetchNotImplementedError(f"read_parquet options not supported yet: {sorted(options)}")
    return DataFrame(_core.PyPlan.read_parquet(expand_paths(path, ".parquet")))
