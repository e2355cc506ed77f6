"""Ketch: a multimodal DataFrame engine with a C++ core (Arrow inside) and Daft's Python API.

Quick start::

    import ketch
    from ketch import col

    df = ketch.read_parquet("images.parquet")
    df = df.with_column("image", col("bytes").image.decode(mode="RGB").image.resize(224, 224))
    df.where(col("label") == 3).select("id", "image").show()
"""

from __future__ import annotations

# pyarrow first: it loads libarrow*.so that ketch._core links against, and pyarrow.fs registers
# S3 finalization at exit (see shared/docs/build-notes.md).
import atexit

import pyarrow  # noqa: F401
import pyarrow.fs  # noqa: F401

# Before the core, which needs this pyarrow's libarrow: another major version is an ImportError
# that says which pyarrow to install.
from ketch import _pyarrow_check  # noqa: F401

# isort: split
from ketch import _core, arrow_pickle, context, errors, exceptions
from ketch.context import execution_config_ctx, get_execution_config, set_execution_config
from ketch.dataframe import DataFrame
from ketch.dataframe_ops.constructors import from_pylist, range
from ketch.dataframe_ops.grouped_udfs import udaf
from ketch.dataframe_ops.set_ops import concat
from ketch.datatype import DataType, ImageMode, TimeUnit
from ketch.expressions import Expression, col, element, lit
from ketch.expressions.temporal import interval
from ketch.file import AudioFile, File, VideoFile
from ketch.io import (
    HTTPConfig,
    IOConfig,
    S3Config,
    from_arrow,
    from_files,
    from_glob_path,
    from_pandas,
    from_pydict,
    read_csv,
    read_json,
    read_lance,
    read_parquet,
    read_video_frames,
)
from ketch.runners import set_runner_native, set_runner_ray
from ketch.schema import Field, Schema
from ketch.series import Series
from ketch.sql import sql, sql_expr
from ketch.udf import cls, func, udf
from ketch.udf.methods import method
from ketch.window import Window

arrow_pickle.register()  # tables of Ketch's extension types pickle (Ray moves partitions so)

# The AWS SDK behind s3:// must shut down before the interpreter exits (idempotent; a no-op when
# S3 was never used).
atexit.register(_core.finalize_s3)

# Last: the threads the imports started (numpy's BLAS pool, jemalloc's), so that a later fork of
# the UDF worker zygote from this process can tell whether anything started threads since.
from ketch.execution import zygote_fork  # noqa: E402, F401

__version__ = "0.1.0"

__all__ = [
    "DataFrame",
    "DataType",
    "Expression",
    "AudioFile",
    "File",
    "VideoFile",
    "ImageMode",
    "Series",
    "Window",
    "TimeUnit",
    "cls",
    "col",
    "concat",
    "context",
    "element",
    "errors",
    "exceptions",
    "Field",
    "Schema",
    "execution_config_ctx",
    "from_arrow",
    "from_pandas",
    "from_pydict",
    "from_pylist",
    "interval",
    "get_execution_config",
    "lit",
    "method",
    "range",
    "read_csv",
    "read_json",
    "read_lance",
    "read_video_frames",
    "read_parquet",
    "from_glob_path",
    "from_files",
    "IOConfig",
    "S3Config",
    "HTTPConfig",
    "set_execution_config",
    "set_runner_native",
    "set_runner_ray",
    "sql",
    "sql_expr",
    "udf",
    "udaf",
    "func",
]
