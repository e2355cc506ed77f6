"""Partitions and batches on 10M rows (100K skewed int keys, Parquet), one engine per process.

- q1: ``repartition(16, key)`` then group by key (sum, count). Ketch's optimizer drops a repartition
  that only feeds an aggregation (DropRepartitions); Daft runs it; Polars and DuckDB have no
  repartition (plain group-by, the nearest equivalent).
- q2: ``repartition(16, key)`` materialized: the rows grouped into 16 hash partitions (Daft:
  ``repartition(16, "key").collect()``; Polars: ``partition_by`` on hash(key) % 16; DuckDB: hash(key) % 16
  then ordered by it).
- q3: ``into_batches(1000)`` materialized (10,000 batches; Daft ``into_batches(1000).collect()``;
  Polars ``iter_slices(1000)``; DuckDB ``fetch_record_batch(1000)``).

The check is the digest of the whole result (``checks.digest``), computed after the timed region;
q2's covers the partitions too: ``keys_split`` (keys found in more than one partition) must be 0
for every engine, whatever its hash function.
"""

from __future__ import annotations

import os

# Peers that do not do the work asked (the harness marks them "known mismatch": time not compared).
KNOWN_MISMATCHES = {
    "daft_q2": "Daft 0.7.26's native runner makes repartition a no-op (it warns so): one partition"
    " holding every key, not 16 hash partitions",
}
N_ROWS = 10_000_000
N_KEYS = 100_000
DATA_NAME = "partitions"


def prepare(data_dir: str) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    table = pa.table(
        {
            "key": pa.array(rng.zipf(1.3, N_ROWS) % N_KEYS, pa.int64()),
            "value": pa.array(rng.integers(1, 50, N_ROWS), pa.int64()),
        }
    )
    pq.write_table(table, _path(data_dir), row_group_size=1_000_000)


def _path(d: str) -> str:
    return os.path.join(d, "rows.parquet")


def run_ketch_q1(d: str) -> dict:
    import ketch
    from ketch import col

    t = ketch.read_parquet(_path(d)).repartition(16, "key").groupby("key").agg(col("value").sum()).to_arrow()
    return {"rows": t.num_rows, "result": t}


def run_daft_q1(d: str) -> dict:
    import daft
    from daft import col

    t = daft.read_parquet(_path(d)).repartition(16, "key").groupby("key").agg(col("value").sum()).to_arrow()
    return {"rows": t.num_rows, "result": t}


def run_polars_q1(d: str) -> dict:
    import polars as pl

    t = pl.scan_parquet(_path(d)).group_by("key").agg(pl.col("value").sum()).collect()
    return {"rows": t.height, "result": t}


def run_duckdb_q1(d: str) -> dict:
    import duckdb

    t = duckdb.sql(f"select key, sum(value) as value from '{_path(d)}' group by key").arrow()
    t = t.read_all() if hasattr(t, "read_all") else t
    return {"rows": t.num_rows, "result": t}


def run_ketch_q2(d: str) -> dict:
    import ketch

    df = ketch.read_parquet(_path(d)).repartition(16, "key").collect()
    assert df.num_partitions() == 16
    return {"rows": len(df), "result": lambda: [p.to_arrow() for p in df.iter_partitions()]}


def run_daft_q2(d: str) -> dict:
    import daft

    df = daft.read_parquet(_path(d)).repartition(16, "key").collect()
    rows = len(df)
    return {"rows": rows, "result": lambda: [p.to_arrow() for p in df.iter_partitions()]}


def run_polars_q2(d: str) -> dict:
    import polars as pl

    df = pl.read_parquet(_path(d))
    parts = df.with_columns((pl.col("key").hash() % 16).alias("p")).partition_by("p")
    rows = sum(p.height for p in parts)
    return {"rows": rows, "result": parts, "result_columns": ["key", "value"]}


def run_duckdb_q2(d: str) -> dict:
    import duckdb

    t = duckdb.sql(f"select *, hash(key) % 16 as p from '{_path(d)}' order by p").arrow()
    t = t.read_all() if hasattr(t, "read_all") else t

    def parts():
        import pyarrow.compute as pc

        return [t.filter(pc.equal(t.column("p"), p)) for p in pc.unique(t.column("p")).to_pylist()]

    return {"rows": t.num_rows, "result": parts, "result_columns": ["key", "value"]}


def run_ketch_q3(d: str) -> dict:
    import ketch

    df = ketch.read_parquet(_path(d)).into_batches(1000).collect()
    assert df.num_partitions() == N_ROWS // 1000
    return {"rows": len(df), "result": df}


def run_daft_q3(d: str) -> dict:
    import daft

    df = daft.read_parquet(_path(d)).into_batches(1000).collect()
    rows = len(df)
    return {"rows": rows, "result": df}


def run_polars_q3(d: str) -> dict:
    import polars as pl

    batches = list(pl.read_parquet(_path(d)).iter_slices(1000))
    rows = sum(b.height for b in batches)
    return {"rows": rows, "result": lambda: pl.concat(batches)}


def run_duckdb_q3(d: str) -> dict:
    import duckdb
    import pyarrow as pa

    reader = duckdb.sql(f"select * from '{_path(d)}'").fetch_record_batch(1000)
    batches = list(reader)
    rows = sum(b.num_rows for b in batches)
    return {"rows": rows, "result": lambda: pa.Table.from_batches(batches)}
