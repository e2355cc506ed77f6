"""Join: 4M-row fact table (skewed keys) inner-joined with a 100K-row dimension table.

The check is the digest of the whole result (``checks.digest`` over key, value, qty, name, weight:
engines order the joined columns differently), computed after the timed region.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from relational_data import dim, fact, low_memory_config, prepare  # noqa: E402,F401

COLUMNS = ["key", "value", "qty", "name", "weight"]


def run_ketch(d: str) -> dict:
    import ketch

    t = ketch.read_parquet(fact(d)).join(ketch.read_parquet(dim(d)), on="key").to_arrow()
    return {"rows": t.num_rows, "result": t, "result_columns": COLUMNS}


def run_ketch_low_memory(d: str) -> dict:
    """Budget = half the input: both join inputs spill partitions (grace hash join), output
    streamed into Parquet."""
    import shutil
    import tempfile

    import pyarrow.parquet as pq

    import ketch

    config = low_memory_config(d)
    out = tempfile.mkdtemp()
    with ketch.execution_config_ctx(**config):
        ketch.read_parquet(fact(d)).join(ketch.read_parquet(dim(d)), on="key").write_parquet(out)
    rows = pq.ParquetDataset(out).read(columns=["key"]).num_rows

    def written():
        t = pq.read_table(out)
        shutil.rmtree(out)
        return t

    bound = config["memory_budget_bytes"] * 1.5 / 2**20 + 300
    return {"rows": rows, "result": written, "result_columns": COLUMNS, "rss_bound_mb": bound}


def run_duckdb(d: str) -> dict:
    import duckdb

    t = duckdb.sql(f"select * from '{fact(d)}' f join '{dim(d)}' d using (key)").arrow()
    t = t.read_all() if hasattr(t, "read_all") else t
    return {"rows": t.num_rows, "result": t, "result_columns": COLUMNS}


def run_polars(d: str) -> dict:
    import polars as pl

    t = pl.scan_parquet(fact(d)).join(pl.scan_parquet(dim(d)), on="key").collect()
    return {"rows": t.height, "result": t, "result_columns": COLUMNS}


def run_daft(d: str) -> dict:
    import daft

    t = daft.read_parquet(fact(d)).join(daft.read_parquet(dim(d)), on="key").to_arrow()
    return {"rows": t.num_rows, "result": t, "result_columns": COLUMNS}


def run_pandas(d: str) -> dict:
    import pandas as pd

    t = pd.read_parquet(fact(d)).merge(pd.read_parquet(dim(d)), on="key")
    return {"rows": len(t), "result": t, "result_columns": COLUMNS}


DATA_NAME = "relational"
