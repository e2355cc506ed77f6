"""Tables without columns on the Ray runner: ``count_rows()`` (a query that keeps no column) and
``select()`` keep their row counts through the object store and the driver, over a scan's tasks,
in-memory partitions, a shuffle (distinct) and a driver stage (sort), as on the native runner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import ketch
from ketch import col


def test_count_rows_and_empty_selects_keep_their_rows(on_ray: Any, tmp_path: Path) -> None:
    for f in range(4):
        pq.write_table(
            pa.table({"id": range(f * 25, (f + 1) * 25), "g": [i % 3 for i in range(25)]}),
            tmp_path / f"part-{f}.parquet",
        )
    scan = str(tmp_path / "*.parquet")
    parts = ketch.from_pydict({"x": list(range(30))}).into_partitions(3).collect()

    assert ketch.read_parquet(scan).count_rows() == 100
    assert ketch.read_parquet(scan).where(col("id") >= 50).count_rows() == 50
    assert parts.with_column("y", col("x") + 1).count_rows() == 30
    assert ketch.read_parquet(scan).select("g").distinct().count_rows() == 3
    assert ketch.read_parquet(scan).sort("id").count_rows() == 100
    assert parts.with_column("y", col("x") * 2).collect().count_rows() == 30
