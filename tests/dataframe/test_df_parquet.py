"""read_parquet (path, list, glob, directory; pushdowns) and write_parquet, checked against pyarrow."""

from __future__ import annotations

import io
import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import ketch
from ketch import col
from ketch.errors import KetchFileNotFoundError

NUM_FILES = 3


@pytest.fixture
def parquet_dir(tmp_path, rng) -> tuple[str, list[str], list[pa.Table]]:
    """Three Parquet files (several row groups each) with distinct, increasing ids."""
    root = tmp_path / "data"
    root.mkdir()
    paths, tables = [], []
    for i in range(NUM_FILES):
        n = 1500 + 111 * i
        x = rng.normal(size=n)
        table = pa.table(
            {
                "id": pa.array(np.arange(n) + 100_000 * i, pa.int64()),
                "x": pa.array(x, mask=rng.random(n) < 0.1),
                "cat": pa.array(rng.choice(["red", "green", "blue"], n)),
                "w": pa.array(rng.integers(0, 1000, n), pa.int32()),
            }
        )
        path = root / f"part-{i:02d}.parquet"
        pq.write_table(table, path, row_group_size=400)
        paths.append(str(path))
        tables.append(table)
    return str(root), paths, tables


def _sections(df: ketch.DataFrame) -> tuple[str, str, str]:
    buf = io.StringIO()
    df.explain(show_all=True, file=buf)
    text = buf.getvalue()
    unoptimized, rest = text.split("== Optimized Logical Plan ==")
    optimized, physical = rest.split("== Physical Plan ==")
    return unoptimized, optimized, physical


def test_read_single_path(parquet_dir):
    _, paths, tables = parquet_dir
    df = ketch.read_parquet(paths[1])
    assert df.schema() == tables[1].schema
    assert df.to_arrow().equals(tables[1])


def test_read_list_preserves_list_order(parquet_dir):
    _, paths, tables = parquet_dir
    out = ketch.read_parquet([paths[2], paths[0]]).to_arrow()
    assert out.equals(pa.concat_tables([tables[2], tables[0]]))


def test_read_glob_and_directory_preserve_row_order(parquet_dir):
    root, _, tables = parquet_dir
    expected = pa.concat_tables(tables)
    assert ketch.read_parquet(os.path.join(root, "*.parquet")).to_arrow().equals(expected)
    assert ketch.read_parquet(root).to_arrow().equals(expected)
    assert ketch.read_parquet("file://" + root).to_arrow().equals(expected)


def test_row_order_with_small_morsels_and_many_threads(parquet_dir):
    root, _, tables = parquet_dir
    expected = pa.concat_tables(tables)
    with ketch.execution_config_ctx(morsel_size_rows=97, num_compute_threads=4, max_morsels_in_flight=6):
        out = ketch.read_parquet(root).with_column("y", col("x") * 2).to_arrow()
    assert out.column("id").equals(expected.column("id"))
    assert out.column("y").to_pylist() == pc.multiply(expected.column("x"), 2).to_pylist()


def test_count_rows(parquet_dir):
    root, _, tables = parquet_dir
    assert ketch.read_parquet(root).count_rows() == sum(t.num_rows for t in tables)
    expected = pa.concat_tables(tables)
    n_red = pc.sum(pc.equal(expected["cat"], "red")).as_py()
    assert ketch.read_parquet(root).where(col("cat") == "red").count_rows() == n_red


def test_projection_and_filter_pushdown_in_optimized_plan(parquet_dir):
    root, _, tables = parquet_dir
    df = ketch.read_parquet(root).where((col("x") > 0.5) & (col("cat") == "red")).select("id", "x")
    unoptimized, optimized, physical = _sections(df)

    assert "Projection pushdown = None" in unoptimized
    assert "Filter pushdown = None" in unoptimized
    assert "Projection pushdown = [id, x]" in optimized
    assert 'Filter pushdown = ((col(x) > lit(0.5)) & (col(cat) == lit("red")))' in optimized
    assert "Num files = 3" in optimized
    assert "Filter:" not in optimized  # the filter moved into the scan
    assert "ScanParquet" in physical

    expected = pa.concat_tables(tables)
    mask = pc.and_kleene(pc.greater(expected["x"], 0.5), pc.equal(expected["cat"], "red"))
    assert df.to_arrow().equals(expected.filter(mask).select(["id", "x"]))


def test_filter_pushdown_through_alias(parquet_dir):
    root, _, tables = parquet_dir
    df = ketch.read_parquet(root).select(col("id").alias("key"), "w").where(col("key") >= 100_700)
    _, optimized, _ = _sections(df)
    assert "Filter pushdown = (col(id) >= lit(100700))" in optimized
    assert "Projection pushdown = [id, w]" in optimized
    expected = pa.concat_tables(tables)
    expected = expected.filter(pc.greater_equal(expected["id"], 100_700))
    out = df.to_arrow()
    assert out.column_names == ["key", "w"]
    assert out.column("key").to_pylist() == expected.column("id").to_pylist()
    assert out.column("w").equals(expected.column("w"))


def test_filter_on_cheap_computed_column_reaches_the_scan(parquet_dir):
    root, _, tables = parquet_dir
    df = ketch.read_parquet(root).with_column("w2", col("w") * 2).where(col("w2") > 1500).select("id", "w2")
    _, optimized, _ = _sections(df)
    assert "Filter pushdown = ((col(w) * lit(2)) > lit(1500))" in optimized
    assert "Projection pushdown = [id, w]" in optimized
    expected = pa.concat_tables(tables)
    w2 = pc.multiply(expected["w"], 2)
    assert df.to_pydict()["id"] == expected.filter(pc.greater(w2, 1500))["id"].to_pylist()


def test_limit_after_filter_on_parquet(parquet_dir):
    root, _, tables = parquet_dir
    expected = pa.concat_tables(tables)
    expected = expected.filter(pc.equal(expected["cat"], "blue")).slice(0, 1234)
    assert ketch.read_parquet(root).where(col("cat") == "blue").limit(1234).to_arrow().equals(expected)


def test_decode_error_after_pushed_filter_names_the_source_row(tmp_path):
    """Rows are numbered across files; a filter pushed into the scan must not shift the number."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.zeros((3, 3, 3), np.uint8)).save(buf, "PNG")
    good = buf.getvalue()
    root = tmp_path / "imgs"
    root.mkdir()
    for f in range(2):
        blobs = [good] * 100
        if f == 1:
            blobs[50] = b"corrupt"  # source row 150
        table = pa.table({"k": pa.array(np.arange(100) + 100 * f), "b": pa.array(blobs, pa.binary())})
        pq.write_table(table, root / f"p{f}.parquet")
    df = ketch.read_parquet(str(root)).where((col("k") != 10) & (col("k") != 120))
    df = df.with_column("img", col("b").image.decode())
    _, optimized, _ = _sections(df)
    assert "Filter pushdown = ((col(k) != lit(10)) & (col(k) != lit(120)))" in optimized
    with pytest.raises(ValueError, match="row 150"):
        df.collect()


def test_glob_matching_nothing_raises(tmp_path):
    pattern = str(tmp_path / "nothing-here" / "*.parquet")
    with pytest.raises(KetchFileNotFoundError) as info:
        ketch.read_parquet(pattern)
    assert isinstance(info.value, FileNotFoundError)
    assert pattern in str(info.value)


def test_missing_path_raises(tmp_path):
    path = str(tmp_path / "missing.parquet")
    with pytest.raises(FileNotFoundError, match="missing.parquet"):
        ketch.read_parquet(path)


def test_write_parquet_roundtrip(tmp_path, rng):
    n = 5000
    table = pa.table(
        {
            "a": pa.array(rng.integers(-1000, 1000, n), pa.int64()),
            "s": pa.array([f"s{i}" if i % 7 else None for i in range(n)], pa.string()),
            "f": pa.array(rng.random(n)),
        }
    )
    out_dir = tmp_path / "out"
    written = ketch.from_arrow(table).write_parquet(out_dir)
    assert isinstance(written, ketch.DataFrame)
    assert written.column_names == ["path"]
    paths = written.to_pydict()["path"]
    assert len(paths) == 1
    assert os.path.isfile(paths[0]) and paths[0].endswith(".parquet")
    assert os.path.dirname(paths[0]) == str(out_dir)
    assert pq.read_table(paths[0]).equals(table)
    assert not [e for e in os.listdir(out_dir) if e.endswith(".tmp")]
    # Ketch reads its own output back too.
    assert ketch.read_parquet(str(out_dir)).to_arrow().equals(table)


def test_write_parquet_of_filtered_query(tmp_path, parquet_dir):
    root, _, tables = parquet_dir
    df = ketch.read_parquet(root).where(col("w") < 100).select("id", "w")
    # One file per partition (scan task), in partition order.
    paths = df.write_parquet(tmp_path / "filtered", compression="zstd").to_pydict()["path"]
    expected = pa.concat_tables(tables)
    expected = expected.filter(pc.less(expected["w"], 100)).select(["id", "w"])
    assert pa.concat_tables([pq.read_table(path) for path in paths]).equals(expected)


def test_write_mode_append_then_overwrite(tmp_path):
    out_dir = tmp_path / "modes"
    first = pa.table({"v": list(range(10))})
    second = pa.table({"v": list(range(100, 105))})
    third = pa.table({"v": [-1, -2]})
    p1 = ketch.from_arrow(first).write_parquet(out_dir).to_pydict()["path"][0]
    p2 = ketch.from_arrow(second).write_parquet(out_dir, write_mode="append").to_pydict()["path"][0]
    assert p1 != p2
    assert sorted(os.listdir(out_dir)) == sorted([os.path.basename(p1), os.path.basename(p2)])

    p3 = ketch.from_arrow(third).write_parquet(out_dir, write_mode="overwrite").to_pydict()["path"][0]
    assert os.listdir(out_dir) == [os.path.basename(p3)]
    assert pq.read_table(p3).equals(third)
    assert ketch.read_parquet(str(out_dir)).to_pydict() == {"v": [-1, -2]}


def test_write_parquet_rejects_bad_arguments(tmp_path):
    df = ketch.from_pydict({"v": [1]})
    with pytest.raises(ValueError):
        df.write_parquet(tmp_path / "x", write_mode="upsert")
    with pytest.raises(ValueError, match="compression"):
        df.write_parquet(tmp_path / "y", compression="nope")
