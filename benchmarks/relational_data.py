"""Shared input of the relational benchmarks: a fact table and a dimension table in Parquet."""

from __future__ import annotations

import os

N_ROWS = 4_000_000
N_KEYS = 100_000


def prepare(data_dir: str) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    keys = rng.zipf(1.3, N_ROWS) % N_KEYS  # skewed keys
    fact = pa.table(
        {
            "key": pa.array(keys, pa.int64()),
            "value": pa.array(rng.normal(100.0, 15.0, N_ROWS)),
            "qty": pa.array(rng.integers(1, 50, N_ROWS), pa.int64()),
        }
    )
    pq.write_table(fact, os.path.join(data_dir, "fact.parquet"), row_group_size=500_000)
    dim = pa.table(
        {
            "key": pa.array(np.arange(N_KEYS), pa.int64()),
            "name": pa.array([f"name-{i:06d}" for i in range(N_KEYS)], pa.large_string()),
            "weight": pa.array(rng.random(N_KEYS)),
        }
    )
    pq.write_table(dim, os.path.join(data_dir, "dim.parquet"))


def fact(data_dir: str) -> str:
    return os.path.join(data_dir, "fact.parquet")


def dim(data_dir: str) -> str:
    return os.path.join(data_dir, "dim.parquet")


def low_memory_config(data_dir: str) -> dict:
    """Ketch's execution config for the low-memory cases: a budget of half the fact table's size
    in memory, so sort, aggregate and join must spill; spill files under the data directory."""
    import pyarrow.parquet as pq

    in_memory = pq.read_metadata(fact(data_dir)).num_rows * 24  # three 8-byte columns
    return {"memory_budget_bytes": in_memory // 2, "spill_dir": os.path.join(data_dir, "spill")}
