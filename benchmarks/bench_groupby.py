"""Group-by: 4M rows, 100K skewed int keys -> sum(qty), mean(value), count(value) per key.

The check is the digest of the whole result (``checks.digest``: per column the sum and the sum
weighted by a hash of the key; floats equal across engines up to rounding), computed after the
timed region.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from relational_data import fact, low_memory_config, prepare  # noqa: E402,F401


def run_ketch(d: str) -> dict:
    import ketch
    from ketch import col

    t = (
        ketch.read_parquet(fact(d))
        .groupby("key")
        .agg(
            col("qty").sum().alias("qty"), col("value").mean().alias("mean"), col("value").count().alias("n")
        )
        .to_arrow()
    )
    return {"rows": t.num_rows, "result": t}


def run_ketch_low_memory(d: str) -> dict:
    """Budget = half the input: partial states spill in hash partitions."""
    import ketch
    from ketch import col

    config = low_memory_config(d)
    with ketch.execution_config_ctx(**config):
        t = (
            ketch.read_parquet(fact(d))
            .groupby("key")
            .agg(
                col("qty").sum().alias("qty"),
                col("value").mean().alias("mean"),
                col("value").count().alias("n"),
            )
            .to_arrow()
        )
    bound = config["memory_budget_bytes"] * 1.5 / 2**20 + 300
    return {
        "rows": t.num_rows,
        "result": t,
        "rss_bound_mb": bound,
    }


def run_duckdb(d: str) -> dict:
    import duckdb

    t = duckdb.sql(
        f"select key, sum(qty) qty, avg(value) mean, count(value) n from '{fact(d)}' group by key"
    ).arrow()
    t = t.read_all() if hasattr(t, "read_all") else t
    return {"rows": t.num_rows, "result": t}


def run_polars(d: str) -> dict:
    import polars as pl

    t = (
        pl.scan_parquet(fact(d))
        .group_by("key")
        .agg(pl.col("qty").sum(), pl.col("value").mean().alias("mean"), pl.col("value").count().alias("n"))
        .collect()
    )
    return {"rows": t.height, "result": t}


def run_daft(d: str) -> dict:
    import daft
    from daft import col

    t = (
        daft.read_parquet(fact(d))
        .groupby("key")
        .agg(
            col("qty").sum().alias("qty"), col("value").mean().alias("mean"), col("value").count().alias("n")
        )
        .to_arrow()
    )
    return {"rows": t.num_rows, "result": t}


def run_pandas(d: str) -> dict:
    import pandas as pd

    t = (
        pd.read_parquet(fact(d))
        .groupby("key")
        .agg(qty=("qty", "sum"), mean=("value", "mean"), n=("value", "count"))
    )
    return {"rows": len(t), "result": t}


DATA_NAME = "relational"
