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


def write_fact_files(directory: str, n_rows: int, n_keys: int, files: int, seed: int = 0) -> None:
    """The fact table's columns and distributions (key: zipf(1.3) % ``n_keys``, int64; value:
    normal(100, 15), float64; qty: uniform 1..49, int64), ``n_rows`` rows split evenly over
    ``files`` Parquet files ``part-NNN.parquet`` in ``directory`` (one generated at a time: memory
    stays at one file's worth). For the distributed benchmarks, whose scans need several files."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(directory, exist_ok=True)
    for i in range(files):
        n = n_rows // files + (1 if i < n_rows % files else 0)
        rng = np.random.default_rng([seed, i])
        table = pa.table(
            {
                "key": pa.array(rng.zipf(1.3, n) % n_keys, pa.int64()),
                "value": pa.array(rng.normal(100.0, 15.0, n)),
                "qty": pa.array(rng.integers(1, 50, n), pa.int64()),
            }
        )
        pq.write_table(table, os.path.join(directory, f"part-{i:03d}.parquet"), row_group_size=250_000)


def write_dim_files(directory: str, n_keys: int, files: int, seed: int = 1) -> None:
    """The dimension table (key 0..``n_keys``-1, int64; name "name-NNNNNNN", large_string;
    weight uniform [0, 1), float64) split evenly over ``files`` Parquet files in ``directory``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(seed)
    bounds = np.linspace(0, n_keys, files + 1).astype(np.int64)
    for i in range(files):
        keys = np.arange(bounds[i], bounds[i + 1])
        table = pa.table(
            {
                "key": pa.array(keys, pa.int64()),
                "name": pa.array([f"name-{k:07d}" for k in keys], pa.large_string()),
                "weight": pa.array(rng.random(len(keys))),
            }
        )
        pq.write_table(table, os.path.join(directory, f"part-{i:03d}.parquet"))


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
