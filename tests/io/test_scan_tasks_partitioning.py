"""Scan tasks (the scan's partitions): small files merged into one task up to
``scan_tasks_min_size_bytes`` and at most ``max_sources_per_scan_task`` files; a large single row
group split by row ranges below an expensive pipeline (UDFs), read once. Results, row numbers,
pushdowns, hive columns and error messages are the same as an unsplit scan's."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scan_helpers import optimized_plan, scan_stats

import ketch
from ketch import col
from ketch.errors import KetchError

# Each test runs on the native and on the Ray runner (tests/conftest.py: runner).
pytestmark = pytest.mark.usefixtures("runner")


def planned_tasks(df: ketch.DataFrame) -> int:
    """The number of scan tasks explain states ("Scan tasks = N (...)")."""
    match = re.search(r"Scan tasks = (\d+) \(", optimized_plan(df))
    assert match, optimized_plan(df)
    return int(match.group(1))


def write_tiny_files(root: Path, count: int, rows: int = 10) -> pa.Table:
    """``count`` Parquet files of ``rows`` rows each (names sort in write order); returns their
    concatenation in file order."""
    root.mkdir(parents=True, exist_ok=True)
    tables = []
    for k in range(count):
        table = pa.table(
            {
                "a": pa.array(range(k * rows, (k + 1) * rows), pa.int64()),
                "s": [f"f{k}-r{j}" for j in range(rows)],
            }
        )
        pq.write_table(table, root / f"part-{k:03d}.parquet")
        tables.append(table)
    return pa.concat_tables(tables)


@pytest.fixture
def tiny_dir(tmp_path: Path) -> tuple[str, pa.Table]:
    return str(tmp_path / "tiny"), write_tiny_files(tmp_path / "tiny", 30)


@pytest.fixture
def one_row_group(tmp_path: Path) -> tuple[str, pa.Table]:
    """One Parquet file of 120k URLs in a single row group (about 1.3 MB)."""
    n = 120_000
    table = pa.table(
        {
            "url": [f"https://example.com/images/{i:07d}.jpg" for i in range(n)],
            "i": pa.array(range(n), pa.int64()),
        }
    )
    path = str(tmp_path / "urls.parquet")
    pq.write_table(table, path, row_group_size=n)
    assert pq.ParquetFile(path).metadata.num_row_groups == 1
    return path, table


@ketch.func
def url_length(u: str) -> int:
    return len(u)


# -- merging small files -----------------------------------------------------------------------------


@pytest.mark.parametrize("threads", [1, 2, 4, 8])
def test_thirty_tiny_files_become_at_most_three_tasks(tiny_dir, threads):
    path, table = tiny_dir
    with ketch.execution_config_ctx(num_compute_threads=threads):
        df = ketch.read_parquet(path)
        plan = optimized_plan(df)
        assert planned_tasks(df) == 3, plan
        assert "30 small files merged, at most 10 per task (max_sources_per_scan_task)" in plan
        stats = scan_stats(df)
        assert stats["scan_tasks"] == 3
        assert stats["files_read"] == 30
        assert stats["row_groups_read"] == 30
        assert df.to_arrow().equals(table)


def test_max_sources_per_scan_task_caps_the_files_of_a_task(tiny_dir):
    path, table = tiny_dir
    for limit, tasks in [(5, 6), (7, 5), (1, 30), (30, 1), (100, 1)]:
        with ketch.execution_config_ctx(max_sources_per_scan_task=limit, num_compute_threads=2):
            df = ketch.read_parquet(path)
            assert planned_tasks(df) == tasks, limit
            assert scan_stats(df)["scan_tasks"] == tasks
            assert df.to_arrow().equals(table)


def test_min_size_bounds_merging(tiny_dir):
    path, table = tiny_dir
    one_file = os.path.getsize(os.path.join(path, "part-000.parquet"))
    # Every file's columns are under the minimum: with a minimum of about one file, no merging.
    with ketch.execution_config_ctx(scan_tasks_min_size_bytes=1, scan_tasks_max_size_bytes=10 * one_file):
        df = ketch.read_parquet(path)
        assert planned_tasks(df) == 30
        assert df.to_arrow().equals(table)


@pytest.mark.parametrize("bad", [0, -1, "3", 2.5, True])
def test_max_sources_per_scan_task_is_validated(bad):
    with pytest.raises(ValueError, match="max_sources_per_scan_task"):
        with ketch.execution_config_ctx(max_sources_per_scan_task=bad):
            pass
    assert ketch.get_execution_config().max_sources_per_scan_task == 10


def test_pushdowns_over_merged_tasks(tiny_dir):
    path, table = tiny_dir
    with ketch.execution_config_ctx(num_compute_threads=3):
        df = (
            ketch.read_parquet(path)
            .where((col("a") > 40) & (col("a") < 200) & (col("s") != "f10-r5"))
            .select("s")
        )
        assert planned_tasks(df) == 2  # statistics leave files 5..19: 10 + 5
        want = [
            s
            for a, s in zip(table.column("a").to_pylist(), table.column("s").to_pylist(), strict=True)
            if 40 < a < 200 and s != "f10-r5"
        ]
        assert df.to_pydict()["s"] == want
        # Statistics prune whole files (row groups) of a merged task; the rest still merge.
        pruned = ketch.read_parquet(path).where(col("a") >= 250)
        stats = scan_stats(pruned)
        assert stats["row_groups_pruned"] == 25 and stats["row_groups_read"] == 5
        assert stats["scan_tasks"] == 1
        assert pruned.to_pydict()["a"] == list(range(250, 300))
        limited = ketch.read_parquet(path).limit(35)
        assert limited.to_pydict()["a"] == list(range(35))
        assert scan_stats(ketch.read_parquet(path).limit(35))["files_read"] <= 4
        assert ketch.read_parquet(path).select("a").limit(3).to_pydict() == {"a": [0, 1, 2]}
        assert ketch.read_parquet(path).count_rows() == 300


def test_hive_columns_over_merged_tasks(tmp_path):
    rows = []
    for key in range(6):
        for part in range(3):
            d = tmp_path / "hive" / f"key={key}"
            d.mkdir(parents=True, exist_ok=True)
            values = [key * 100 + part * 10 + j for j in range(4)]
            pq.write_table(pa.table({"v": pa.array(values, pa.int64())}), d / f"{part}.parquet")
            rows += [(v, key) for v in values]
    with ketch.execution_config_ctx(num_compute_threads=2):
        df = ketch.read_parquet(str(tmp_path / "hive"), hive_partitioning=True)
        assert planned_tasks(df) == 2  # 18 files, at most 10 per task
        out = df.to_pydict()
        assert list(zip(out["v"], out["key"], strict=True)) == rows
        filtered = (
            ketch.read_parquet(str(tmp_path / "hive"), hive_partitioning=True)
            .where(col("key") >= 3)
            .select("v", "key")
        )
        assert planned_tasks(filtered) == 1  # 9 files left after partition pruning
        out = filtered.to_pydict()
        assert list(zip(out["v"], out["key"], strict=True)) == [r for r in rows if r[1] >= 3]


def test_error_in_a_merged_task_names_the_file_and_the_source_row(tiny_dir):
    path, _ = tiny_dir

    @ketch.func
    def fail_at(x: int) -> int:
        if x == 237:
            raise ValueError("bad value")
        return x

    with ketch.execution_config_ctx(num_compute_threads=2):
        df = ketch.read_parquet(path).with_column("y", fail_at(col("a")))
        with pytest.raises(KetchError, match=r"bad value \(call on source rows (\d+)\.\.(\d+)\)") as info:
            df.to_arrow()
    first, last = (int(x) for x in str(info.value).rsplit("rows ", 1)[1].split(")")[0].split(".."))
    assert first <= 237 <= last  # row 237 of the scan is row 7 of the 24th file

    # A file of the wrong type in the middle of a merged task fails naming that file.
    bad = os.path.join(path, "part-017.parquet")
    pq.write_table(pa.table({"a": ["x"] * 10, "s": ["y"] * 10}), bad)
    with pytest.raises(KetchError, match=r"part-017\.parquet"):
        ketch.read_parquet(path, schema_hints={"a": ketch.DataType.int64()}).to_arrow()


def test_csv_and_json_files_are_merged(tmp_path):
    csv_dir, json_dir = tmp_path / "csv", tmp_path / "json"
    csv_dir.mkdir()
    json_dir.mkdir()
    want = []
    for k in range(23):
        values = [k * 3 + j for j in range(3)]
        want += values
        (csv_dir / f"{k:02d}.csv").write_text("v\n" + "".join(f"{v}\n" for v in values))
        (json_dir / f"{k:02d}.jsonl").write_text("".join(json.dumps({"v": v}) + "\n" for v in values))
    for df, reader in [
        (ketch.read_csv(str(csv_dir)), "CSV"),
        (ketch.read_json(str(json_dir)), "JSON"),
    ]:
        with ketch.execution_config_ctx(num_compute_threads=2):
            plan = optimized_plan(df)
            assert planned_tasks(df) == 3, plan  # 10 + 10 + 3 files
            assert f"{reader} files are not split" in plan
            assert scan_stats(df)["scan_tasks"] == 3
            assert df.to_pydict()["v"] == want
            assert df.where(col("v") > 30).limit(4).to_pydict()["v"] == [31, 32, 33, 34]
    with ketch.execution_config_ctx(max_sources_per_scan_task=4):
        assert planned_tasks(ketch.read_csv(str(csv_dir))) == 6


def test_csv_error_in_a_merged_task_names_the_file_and_row(tmp_path):
    for k in range(5):
        body = "v\n1\n2\n" if k != 3 else "v\n1\nnot-a-number\n"
        (tmp_path / f"{k}.csv").write_text(body)
    df = ketch.read_csv(str(tmp_path), schema={"v": ketch.DataType.int64()})
    assert planned_tasks(df) == 1
    with pytest.raises(KetchError, match=r"3\.csv'.*Row #3.*not-a-number"):
        df.to_arrow()


# -- splitting one large row group -------------------------------------------------------------------


@pytest.mark.parametrize("threads", [1, 3, 4])
def test_single_row_group_under_a_udf_feeds_every_worker(one_row_group, threads):
    path, table = one_row_group
    with ketch.execution_config_ctx(num_compute_threads=threads):
        df = ketch.read_parquet(path).with_column("n", url_length(col("url")))
        plan = optimized_plan(df)
        tasks = planned_tasks(df)
        assert tasks >= 2 * threads, plan
        assert "1 row group split into" in plan and "each row group still read once" in plan
        stats = scan_stats(df)
        out = df.to_arrow()
        assert stats["scan_tasks"] == tasks
        assert stats["row_groups_read"] == 1
        assert stats["rows_read"] == table.num_rows
        assert out.column("i").equals(table.column("i"))
        assert out.column("url").equals(table.column("url"))
        assert out.column("n").to_pylist() == [len(u) for u in table.column("url").to_pylist()]

        # Nothing is read twice: the split scan fetches what a plain scan fetches, the row
        # group's column chunks (the footer is read once, at planning).
        plain = ketch.read_parquet(path)
        assert planned_tasks(plain) == 1
        plain_stats = scan_stats(plain)
        chunks = pq.ParquetFile(path).metadata.row_group(0)
        chunk_bytes = sum(chunks.column(c).total_compressed_size for c in range(chunks.num_columns))
        assert stats["bytes_read"] == plain_stats["bytes_read"] == chunk_bytes
        assert chunk_bytes <= os.path.getsize(path)


def test_cheap_pipeline_keeps_the_row_group_whole(one_row_group):
    path, _ = one_row_group
    with ketch.execution_config_ctx(num_compute_threads=4):
        df = ketch.read_parquet(path).where(col("i") > 10)
        assert planned_tasks(df) == 1
        assert "split into" not in optimized_plan(df)


def test_pushdowns_over_split_row_group(one_row_group):
    path, table = one_row_group
    with ketch.execution_config_ctx(num_compute_threads=3, morsel_size_rows=7_000):
        df = (
            ketch.read_parquet(path)
            .where(
                (col("i") > 1_000)
                & (col("i") < 90_000)
                & (col("url") != "https://example.com/images/0050000.jpg")
            )
            .with_column("n", url_length(col("url")))
            .select("i", "n")
        )
        assert planned_tasks(df) >= 6
        out = df.to_pydict()
        want = [i for i in range(1_001, 90_000) if i != 50_000]
        assert out["i"] == want
        assert out["n"] == [len(f"https://example.com/images/{i:07d}.jpg") for i in want]
        limited = ketch.read_parquet(path).with_column("n", url_length(col("url"))).limit(25_000)
        assert planned_tasks(limited) >= 6
        assert limited.to_pydict()["i"] == list(range(25_000))
        again = ketch.read_parquet(path).with_column("n", url_length(col("url"))).limit(25_000)
        planned = planned_tasks(again)
        assert 2 <= scan_stats(again)["scan_tasks"] < planned  # later ranges never start
        assert ketch.read_parquet(path).with_column("n", url_length(col("url"))).count_rows() == 120_000


def test_udf_error_in_a_split_range_names_the_source_row(one_row_group):
    path, _ = one_row_group

    @ketch.func
    def fail_at(x: int) -> int:
        if x == 97_531:
            raise ValueError("bad value")
        return x

    with ketch.execution_config_ctx(num_compute_threads=3):
        df = ketch.read_parquet(path).where(col("i") > 5).with_column("y", fail_at(col("i")))
        assert planned_tasks(df) >= 6
        with pytest.raises(KetchError, match=r"bad value \(call on source rows (\d+)\.\.(\d+)\)") as info:
            df.to_arrow()
    first, last = (int(x) for x in str(info.value).rsplit("rows ", 1)[1].split(")")[0].split(".."))
    assert first <= 97_531 <= last


def test_many_row_groups_and_small_files_under_a_udf(tmp_path):
    """Row groups of several files below a UDF: split only as far as needed, every row once, in order."""
    tables = []
    for k in range(3):
        n = 30_000
        t = pa.table({"i": pa.array(range(k * n, (k + 1) * n), pa.int64())})
        pq.write_table(t, tmp_path / f"{k}.parquet", row_group_size=10_000 if k == 1 else n)
        tables.append(t)
    table = pa.concat_tables(tables)
    with ketch.execution_config_ctx(num_compute_threads=4, morsel_size_rows=3_000):
        df = ketch.read_parquet(str(tmp_path)).with_column(
            "j", url_length(col("i").cast(ketch.DataType.string()))
        )
        assert planned_tasks(df) >= 8
        out = df.to_arrow()
        assert out.column("i").equals(table.column("i"))
        assert (
            scan_stats(
                ketch.read_parquet(str(tmp_path)).with_column(
                    "j", url_length(col("i").cast(ketch.DataType.string()))
                )
            )["bytes_read"]
            == scan_stats(ketch.read_parquet(str(tmp_path)))["bytes_read"]
        )


# -- scan tasks are the scan's partitions ------------------------------------------------------------


def test_scan_tasks_are_the_partitions_of_the_result(tiny_dir):
    path, table = tiny_dir
    with ketch.execution_config_ctx(num_compute_threads=4):
        df = ketch.read_parquet(path)
        assert df.num_partitions() == 3
        parts = [p.to_arrow() for p in ketch.read_parquet(path).iter_partitions()]
        assert [p.num_rows for p in parts] == [100, 100, 100]  # 10 files of 10 rows each
        assert pa.concat_tables(parts).equals(table)
        collected = ketch.read_parquet(path).collect()
        assert collected.num_partitions() == 3
    with ketch.execution_config_ctx(max_sources_per_scan_task=4):
        parts = [p.to_arrow().column("a").to_pylist() for p in ketch.read_parquet(path).iter_partitions()]
        assert [len(p) for p in parts] == [40] * 7 + [20]
        assert parts[1] == list(range(40, 80))


def test_an_empty_file_is_still_a_partition(tmp_path):
    for k, rows in enumerate([3, 0, 2, 0]):
        pq.write_table(
            pa.table({"a": pa.array(range(k * 10, k * 10 + rows), pa.int64())}), tmp_path / f"{k}.parquet"
        )
    with ketch.execution_config_ctx(max_sources_per_scan_task=1):
        df = ketch.read_parquet(str(tmp_path))
        assert df.num_partitions() == 4
        parts = [p.to_pydict()["a"] for p in ketch.read_parquet(str(tmp_path)).iter_partitions()]
        assert parts == [[0, 1, 2], [], [20, 21], []]
        assert ketch.read_parquet(str(tmp_path)).collect().num_partitions() == 4


def test_split_row_group_partitions_under_a_udf(one_row_group):
    path, table = one_row_group
    with ketch.execution_config_ctx(num_compute_threads=2):
        df = ketch.read_parquet(path).with_column("n", url_length(col("url")))
        assert df.num_partitions() == 4
        parts = [p.to_arrow() for p in df.iter_partitions()]
        assert [p.num_rows for p in parts] == [30_000] * 4
        assert pa.concat_tables(parts).column("i").equals(table.column("i"))
