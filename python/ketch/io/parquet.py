"""read_parquet: a lazy scan of Parquet files, with filter and column pushdown into the reader."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ketch import _core
from ketch.errors import KetchNotImplementedError
from ketch.io.paths import expand_paths

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame


def read_parquet(path: str | list[str], io_config: Any = None, **options: Any) -> DataFrame:
    """A lazy DataFrame over Parquet files: a path, a directory, a glob (``data/*.parquet``,
    ``**`` recursive) or a list of them. The schema comes from the first file's footer; nothing
    else is read until the query runs, and then only the columns and rows it needs.

    Errors: ``KetchFileNotFoundError`` when a path or glob matches nothing; ``KetchIOError`` naming
    the file when it is not valid Parquet.
    """
    from ketch.dataframe import DataFrame

    if io_config is not None:
        raise KetchNotImplementedError(
            "read_parquet does not support io_config (object stores) yet: local paths only"
        )
    if options:
        raise KetchNotImplementedError(f"read_parquet options not supported yet: {sorted(options)}")
    return DataFrame(_core.PyPlan.read_parquet(expand_paths(path, ".parquet")))
