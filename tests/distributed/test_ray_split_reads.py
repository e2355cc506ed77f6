"""A split Parquet row group on Ray (split_reads.py): one read task per row group, its ranges'
tables shared out to compute tasks on every worker, below shuffles and broadcast joins too."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ketch
from ketch import col
from ketch.runners.ray.split_reads import SharedReads, plan_shares


def test_plan_shares_cuts_only_runs_of_several_ranges_and_names_their_reads():
    runs, shared = plan_shares([(0, 1), (1, 8), (9, 1), (10, 2)], 3)
    assert runs == [(0, 1), (1, 3), (4, 3), (7, 2), (9, 1), (10, 1), (11, 1)]
    assert shared == SharedReads(
        reads=[(1, 8), (10, 2)], shares=[None, (0, 0), (0, 3), (0, 6), None, (1, 0), (1, 1)]
    )
    assert plan_shares([(0, 1), (1, 1)], 3) == ([(0, 1), (1, 1)], None)
    assert plan_shares([(0, 5)], 1) == ([(0, 5)], None)  # one worker: its one task reads it once


@ketch.func
def label(i: int) -> str:
    return f"k{i % 7}"


def _one_row_group(tmp_path: Path, n: int = 60_000) -> tuple[str, pa.Table]:
    table = pa.table({"i": pa.array(range(n), pa.int64()), "v": pa.array([float(i % 13) for i in range(n)])})
    path = str(tmp_path / "one.parquet")
    pq.write_table(table, path, row_group_size=n)
    return path, table


def test_split_row_group_under_a_groupby_and_a_broadcast_join_is_read_once(on_ray: Any, tmp_path: Path):
    path, table = _one_row_group(tmp_path)
    names = ketch.from_pydict({"k": [f"k{j}" for j in range(7)], "name": [f"name{j}" for j in range(7)]})
    with ketch.execution_config_ctx(num_compute_threads=4):
        df = (
            ketch.read_parquet(path)
            .with_column("k", label(col("i")))
            .join(names, on="k", strategy="broadcast")
            .groupby("name")
            .agg(col("v").sum().alias("total"), col("i").count().alias("n"))
            .sort("name")
        )
        stats = df.explain_analyze(file=io.StringIO())
        out = df.to_pydict()
    want: dict[str, list[float]] = {}
    for i, v in zip(table["i"].to_pylist(), table["v"].to_pylist(), strict=True):
        want.setdefault(f"name{i % 7}", [0.0, 0])
        want[f"name{i % 7}"][0] += v
        want[f"name{i % 7}"][1] += 1
    assert out == {
        "name": sorted(want),
        "total": [want[k][0] for k in sorted(want)],
        "n": [want[k][1] for k in sorted(want)],
    }
    assert stats.scan["row_groups_read"] == 1 and stats.scan["rows_read"] == table.num_rows
    (scan,) = [s for s in on_ray.last_stages if "Scan" in s.name]  # the broadcast side runs first
    assert "broadcast Join" in scan.name and "partial Aggregate" in scan.name, scan.name
    assert scan.shared_reads == 1 and scan.tasks == 3, scan.name
    assert len(scan.tasks_per_node) == 3, scan.tasks_per_node  # every node computes a share


def test_split_row_group_under_a_sort_is_read_once_by_the_sample_stage(on_ray: Any, tmp_path: Path):
    path, table = _one_row_group(tmp_path, 30_000)
    with ketch.execution_config_ctx(num_compute_threads=4):
        df = ketch.read_parquet(path).with_column("k", label(col("i"))).sort(["k", "i"], desc=[False, True])
        stats = df.explain_analyze(file=io.StringIO())
        out = df.to_pydict()
    rows = sorted(((f"k{i % 7}", i) for i in table["i"].to_pylist()), key=lambda r: (r[0], -r[1]))
    assert out["k"] == [k for k, _ in rows] and out["i"] == [i for _, i in rows]
    assert stats.scan["row_groups_read"] == 1 and stats.scan["rows_read"] == table.num_rows
    (sample,) = [s for s in on_ray.last_stages if s.kind == "sample"]
    assert sample.shared_reads == 1 and len(sample.tasks_per_node) == 3, sample


# -- the pieces, on the native executor -------------------------------------------------------------


def _run(plan: Any) -> pa.Table:
    from ketch import _core

    _, reader = plan.execute(ketch.get_execution_config().to_native(), _core.ExecutionStats())
    return reader.read_all()


def test_source_row_survives_a_pushed_filter_and_travels_through_an_in_memory_source(tmp_path: Path):
    from ketch import _core
    from ketch.runners.ray.split_reads import SOURCE_ROW_COLUMN, read_fragment

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"i": pa.array(range(100), pa.int64())}), path, row_group_size=100)
    df = ketch.read_parquet(str(path)).where(col("i") % 3 == 0)
    scan = df._plan.optimize(config=ketch.get_execution_config().to_native())
    assert scan.kind() == "Scan", scan  # the filter pushed into the scan
    read = _run(read_fragment(scan, 0, 1))
    want = [i for i in range(100) if i % 3 == 0]
    assert read.column("i").to_pylist() == want
    assert read.column(SOURCE_ROW_COLUMN).to_pylist() == want  # the rows' places in the file

    # An in-memory source of those rows numbers them by the column, in two partitions.
    source = _core.PyPlan.in_memory(read, [10, read.num_rows - 10])
    rows = source.project([_core.col("i"), _core.call("_source_row", [], {}).alias("r")])
    out = _run(rows)
    assert out.column("r").to_pylist() == want
    # Without the column, rows are numbered from 0.
    plain = _core.PyPlan.in_memory(read.drop_columns([SOURCE_ROW_COLUMN]))
    out = _run(plain.project([_core.call("_source_row", [], {}).alias("r")]))
    assert out.column("r").to_pylist() == list(range(len(want)))


def _png(value: int) -> bytes:
    import numpy as np
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.full((6, 8, 3), value, np.uint8)).save(buffer, "PNG")
    return buffer.getvalue()


@ketch.func
def _mean_pixel(image: Any) -> float:
    return float(image.mean())


def test_a_one_partition_in_memory_source_below_an_expensive_pipeline_runs_on_every_node(on_ray: Any):
    # from_glob_path / from_pydict make one partition: on Ray its rows are cut into two pieces per
    # CPU, so the decode and the UDF run on every node instead of one task on one node.
    values = [i % 250 for i in range(400)]
    df = ketch.from_pydict({"i": list(range(400)), "png": [_png(v) for v in values]})
    out = df.with_column("m", _mean_pixel(col("png").image.decode(mode="RGB"))).select("i", "m").to_pydict()
    assert out == {"i": list(range(400)), "m": [float(v) for v in values]}
    (stage,) = on_ray.last_stages
    assert stage.tasks == 6 and len(stage.tasks_per_node) == 3, (stage.tasks, stage.tasks_per_node)
    # An error names the row of the whole source, not of the piece it ran in.
    bad = [_png(v) for v in values]
    bad[341] = b"not an image"
    broken = ketch.from_pydict({"png": bad}).with_column(
        "m", _mean_pixel(col("png").image.decode(mode="RGB"))
    )
    with pytest.raises(ketch.errors.KetchError, match="image.decode failed at row 341"):
        broken.collect()
