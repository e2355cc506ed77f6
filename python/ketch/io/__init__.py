"""Creating DataFrames: from Python and Arrow data in memory, from Parquet, CSV and JSON files, and
from Lance datasets."""

from ketch.io.config import HTTPConfig, IOConfig, S3Config
from ketch.io.files import from_files, from_glob_path
from ketch.io.lance import read_lance
from ketch.io.memory import from_arrow, from_pandas, from_pydict
from ketch.io.scan import read_csv, read_json, read_parquet
from ketch.io.video import read_video_frames

__all__ = [
    "HTTPConfig",
    "IOConfig",
    "S3Config",
    "from_arrow",
    "from_files",
    "from_glob_path",
    "from_pandas",
    "from_pydict",
    "read_csv",
    "read_json",
    "read_lance",
    "read_parquet",
    "read_video_frames",
]
