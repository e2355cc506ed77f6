"""Sort: 4M rows by (key ascending, value descending).

The check is an ordered digest of the whole result (``checks.digest(..., ordered=True)``: every value
of key and value weighted by its row position, so equal only if the order is equal), computed after
the timed region.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from relational_data import fact, low_memory_config, prepare  # noqa: E402,F401


def _result(t) -> dict:
    return {"result": t, "result_columns": ["key", "value"], "result_ordered": True}


def run_ketch(d: str) -> dict:
    import ketch

    t = ketch.read_parquet(fact(d)).sort(["key", "value"], desc=[False, True]).to_arrow()
    return {"rows": t.num_rows, **_result(t)}


def run_ketch_low_memory(d: str) -> dict:
    """Budget = half the input: the sort spills runs and merges them, streaming into Parquet."""
    import tempfile

    import pyarrow.parquet as pq

    import ketch

    config = low_memory_config(d)
    with tempfile.TemporaryDirectory() as out, ketch.execution_config_ctx(**config):
        ketch.read_parquet(fact(d)).sort(["key", "value"], desc=[False, True]).write_parquet(out)
        t = pq.read_table(out, columns=["key", "value"])
    bound = config["memory_budget_bytes"] * 1.5 / 2**20 + 300
    return {
        "rows": t.num_rows,
        **_result(t),
        "rss_bound_mb": bound,
    }


def run_duckdb(d: str) -> dict:
    import duckdb

    t = duckdb.sql(f"select * from '{fact(d)}' order by key asc, value desc").arrow()
    t = t.read_all() if hasattr(t, "read_all") else t
    return {"rows": t.num_rows, **_result(t)}


def run_polars(d: str) -> dict:
    import polars as pl

    t = pl.scan_parquet(fact(d)).sort(["key", "value"], descending=[False, True]).collect()
    return {"rows": t.height, **_result(t)}


def run_daft(d: str) -> dict:
    import daft

    t = daft.read_parquet(fact(d)).sort(["key", "value"], desc=[False, True]).to_arrow()
    return {"rows": t.num_rows, **_result(t)}


def run_pandas(d: str) -> dict:
    import pandas as pd

    t = pd.read_parquet(fact(d)).sort_values(["key", "value"], ascending=[True, False], kind="stable")
    return {"rows": len(t), **_result(t)}


DATA_NAME = "relational"
