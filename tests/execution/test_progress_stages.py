"""Progress bars: one per pipeline stage, labelled with user-facing operator names."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq

import ketch
from ketch import col
from ketch.progress import stages, user_name


def test_user_names_hide_engine_plumbing():
    assert user_name("ScanParquet") == "Read Parquet"
    assert user_name("InMemoryScan") == "In-memory source"
    assert user_name("Rechunk[65536, 131072]") is None
    assert user_name("Collect") is None
    assert user_name("IntoBatches") == "Into Batches"
    assert user_name("RepartitionOutput") == "Repartition"


def test_one_stage_per_pipeline_with_rows_in_and_out(tmp_path):
    pq.write_table(pa.table({"a": list(range(1000)), "b": ["x", "y"] * 500}), tmp_path / "t.parquet")
    df = (
        ketch.read_parquet(str(tmp_path / "t.parquet"))
        .where(col("a") >= 100)
        .groupby("b")
        .agg(col("a").sum())
        .sort("b")
    )
    stats = df.explain_analyze(file=io.StringIO())
    got = stages(stats.operators())
    assert [s.pipeline for s in got] == [0, 1, 2]
    assert got[0].label == "Read Parquet → Aggregate"  # the filter runs inside the scan
    assert got[0].rows == 900  # rows the stage's source produced
    assert got[1].label == "Aggregate → Sort"
    assert got[2].label == "Sort"
    assert got[2].rows == 2 and got[2].rows_out == 2
