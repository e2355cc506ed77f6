"""Listing files as a DataFrame: ``from_glob_path``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ketch.errors import KetchNotImplementedError
from ketch.io.parquet import expand_paths

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame


def from_glob_path(path: str | list[str], io_config: Any = None) -> DataFrame:
    """One row per file matched by ``path`` (a glob such as ``images/**/*.jpg``, a directory, which
    lists every file under it, a file, ``file://`` URLs, or a list of those), sorted by path:
    ``path`` (string, absolute), ``size`` (int64, bytes) and ``num_rows`` (int64, null: files are
    not opened). Pair with ``col("path").url.download()`` to read them.

    Errors: ``KetchFileNotFoundError`` when an entry matches nothing; object stores (``s3://``)
    raise ``KetchNotImplementedError`` in this version."""
    from ketch.io.memory import from_arrow

    if io_config is not None:
        raise KetchNotImplementedError("io_config (S3 credentials, endpoints) is not supported yet")
    files = [f for f in expand_paths(path, suffix="") if os.path.isfile(f)]
    sizes = [os.stat(f).st_size for f in files]
    return from_arrow(
        pa.table(
            {
                "path": pa.array(files, pa.large_string()),
                "size": pa.array(sizes, pa.int64()),
                "num_rows": pa.nulls(len(files), pa.int64()),
            }
        )
    )
