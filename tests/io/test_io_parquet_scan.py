"""The Parquet scan: row-group pruning by statistics (proved with the scan's own metrics), parallel
row-group decoding in order, scan tasks sized for the machine, schema evolution and hints, S3."""

from __future__ import annotations

import datetime
import random
import re
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from scan_helpers import optimized_plan, scan_stats

import ketch
from ketch import col, lit
from ketch.errors import KetchError

# Each test runs on the native and on the Ray runner (tests/conftest.py: runner).
pytestmark = pytest.mark.usefixtures("runner")
N = 20_000
RG = 1_000  # rows per row group: 20 row groups, sorted by "a" so min/max are tight


@pytest.fixture
def sorted_file(tmp_path) -> tuple[str, pa.Table]:
    rng = random.Random(0)
    table = pa.table(
        {
            "a": pa.array(range(N), pa.int64()),
            "f": pa.array([i / 10 for i in range(N)], pa.float64()),
            "s": pa.array([f"k{i // RG:03d}" for i in range(N)], pa.string()),
            "d": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=i // RG) for i in range(N)]),
            "n": pa.array([None if i < 5 * RG else rng.random() for i in range(N)], pa.float64()),
            "payload": pa.array([f"payload-{i}" * 4 for i in range(N)]),
        }
    )
    path = str(tmp_path / "sorted.parquet")
    pq.write_table(table, path, row_group_size=RG)
    return path, table


@pytest.mark.parametrize(
    ("predicate", "expected_groups"),
    [
        (col("a") < 1500, 2),
        (col("a") >= 18_500, 2),
        (col("a") == 7_777, 1),
        (lit(7_777) == col("a"), 1),
        ((col("a") > 3_000) & (col("a") <= 4_999), 2),
        ((col("a") < 1_000) | (col("a") >= 19_000), 2),
        (col("s") == "k010", 1),
        (col("d") < datetime.date(2020, 1, 3), 2),
        (col("f") > 1_899.95, 1),
        (col("n").is_null(), 5),
        (col("a") > 1_000_000, 0),
    ],
)
def test_row_group_pruning_reads_only_matching_groups(sorted_file, predicate, expected_groups):
    path, table = sorted_file
    df = ketch.read_parquet(path).where(predicate).select("a", "payload")
    assert f"Row groups = {expected_groups} of {N // RG}" in optimized_plan(df)
    stats = scan_stats(df)
    assert stats["row_groups_read"] == expected_groups
    assert stats["row_groups_pruned"] == N // RG - expected_groups
    assert stats["rows_read"] == expected_groups * RG
    # The result equals pyarrow's filter of the whole table.
    expected = ketch.from_arrow(table).where(predicate).select("a", "payload").to_arrow()
    assert df.to_arrow().equals(expected)


def test_pruning_reduces_bytes_read(sorted_file):
    path, _ = sorted_file
    everything = scan_stats(ketch.read_parquet(path).select("a", "payload"))
    one_group = scan_stats(ketch.read_parquet(path).where(col("a") == 42).select("a", "payload"))
    assert everything["row_groups_read"] == N // RG
    assert one_group["bytes_read"] * 10 < everything["bytes_read"]
    # Column pruning: reading one small column costs less than with the wide one.
    narrow = scan_stats(ketch.read_parquet(path).select("a"))
    assert narrow["bytes_read"] * 3 < everything["bytes_read"]


def test_predicates_that_cannot_prune_still_filter_correctly(sorted_file):
    path, table = sorted_file
    for predicate in [
        col("a") != 5,  # min == max only proves anything for one value
        (col("a") + 1) > 19_990,  # computed: no statistics
        col("f") > 1_899,  # float literal vs float column
        col("a") < 2.5,  # a literal that changes in the cast proves nothing
        (col("a") > 5) | (col("s") == "k019"),
    ]:
        df = ketch.read_parquet(path).where(predicate).select("a")
        expected = ketch.from_arrow(table).where(predicate).select("a").to_arrow()
        assert df.to_arrow().equals(expected), predicate


def test_random_predicates_match_pyarrow(sorted_file):
    path, table = sorted_file
    rng = random.Random(1)
    ops = {"<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal, "==": pc.equal}
    for _ in range(25):
        name = rng.choice(list(ops))
        value = rng.randrange(-100, N + 100)
        expr = {
            "<": col("a") < value,
            "<=": col("a") <= value,
            ">": col("a") > value,
            ">=": col("a") >= value,
        }.get(name, col("a") == value)
        got = ketch.read_parquet(path).where(expr).select("a").to_arrow().column("a")
        want = table.filter(ops[name](table.column("a"), value)).column("a")
        assert got.to_pylist() == want.to_pylist(), (name, value)


def test_parallel_row_groups_keep_order_and_row_numbers(tmp_path):
    table = pa.table(
        {"a": pa.array(range(50_000), pa.int64()), "b": pa.array([i % 97 for i in range(50_000)])}
    )
    path = str(tmp_path / "many.parquet")
    pq.write_table(table, path, row_group_size=1_000)
    with ketch.execution_config_ctx(num_compute_threads=4, morsel_size_rows=700):
        df = ketch.read_parquet(path).where(col("b") != 3).with_column("c", col("a") * 2)
        assert "Scan tasks = 1 " in optimized_plan(df)  # one task; its 50 row groups decode side by side
        out = df.to_arrow()
    expected = table.filter(pc.not_equal(table.column("b"), 3))
    assert out.column("a").equals(expected.column("a"))
    assert out.column("c").to_pylist() == [2 * a for a in expected.column("a").to_pylist()]


def test_udf_error_after_parallel_scan_names_the_source_row(tmp_path):
    table = pa.table({"a": pa.array(range(10_000), pa.int64())})
    path = str(tmp_path / "rows.parquet")
    pq.write_table(table, path, row_group_size=500)

    @ketch.func
    def fail_at(x: int) -> int:
        if x == 7_321:
            raise ValueError("bad value")
        return x

    with ketch.execution_config_ctx(num_compute_threads=4):
        df = ketch.read_parquet(path).where(col("a") > 10).with_column("y", fail_at(col("a")))
        with pytest.raises(KetchError, match=r"bad value \(call on source rows (\d+)\.\.(\d+)\)") as info:
            df.to_arrow()
    rows = re.search(r"source rows (\d+)\.\.(\d+)\)", str(info.value))  # the Ray runner adds the stage after
    assert rows is not None
    first, last = (int(x) for x in rows.groups())
    assert first <= 7_321 <= last


def test_expensive_pipeline_gets_tasks_for_every_worker(tmp_path):
    """One small file of URLs with many row groups: below a download/UDF it becomes 2 tasks per
    worker (Daft needs a manual repartition for this); a cheap query reads it as one task."""
    urls = pa.table({"url": [f"https://example.com/{i}.jpg" for i in range(64_000)]})
    path = str(tmp_path / "urls.parquet")
    pq.write_table(urls, path, row_group_size=4_000)  # 16 row groups

    @ketch.func
    def length(u: str) -> int:
        return len(u)

    with ketch.execution_config_ctx(num_compute_threads=3):
        expensive = ketch.read_parquet(path).with_column("n", length(col("url")))
        text = optimized_plan(expensive)
        assert "Scan tasks = 6 " in text and "UDFs, URL or image kernels" in text
        assert expensive.count_rows() == 64_000
        cheap = optimized_plan(ketch.read_parquet(path).where(col("url") != ""))
        assert "Scan tasks = 1 " in cheap
        download = optimized_plan(
            ketch.read_parquet(path).with_column("b", col("url").url.download(on_error="null"))
        )
        assert "Scan tasks = 6 " in download


def test_small_row_groups_are_merged_and_large_files_split(tmp_path):
    table = pa.table({"a": pa.array(range(20_000), pa.int64())})
    path = str(tmp_path / "tiny_groups.parquet")
    pq.write_table(table, path, row_group_size=100)  # 200 row groups
    with ketch.execution_config_ctx(num_compute_threads=2):
        text = optimized_plan(ketch.read_parquet(path))
        assert "Scan tasks = 1 " in text  # merged up to scan_tasks_min_size_bytes
    with ketch.execution_config_ctx(
        num_compute_threads=1, scan_tasks_min_size_bytes=1, scan_tasks_max_size_bytes=4_000
    ):
        df = ketch.read_parquet(path)
        text = optimized_plan(df)
        tasks = int(text.split("Scan tasks = ")[1].split(" ")[0])
        assert 10 <= tasks <= 200  # capped at the maximum size: split
        assert df.to_arrow().column("a").to_pylist() == list(range(20_000))
    with pytest.raises(ValueError, match="scan_tasks_min_size_bytes"):
        with ketch.execution_config_ctx(scan_tasks_min_size_bytes=10, scan_tasks_max_size_bytes=5):
            pass


def test_files_with_evolved_types_and_schema_hints(tmp_path):
    pq.write_table(
        pa.table({"x": pa.array([1, 2], pa.int64()), "y": ["a", "b"]}), str(tmp_path / "p0.parquet")
    )
    pq.write_table(pa.table({"x": pa.array([3], pa.int32()), "y": ["c"]}), str(tmp_path / "p1.parquet"))
    out = ketch.read_parquet(str(tmp_path)).to_arrow()
    assert out.schema.field("x").type == pa.int64()
    assert out.column("x").to_pylist() == [1, 2, 3]
    hinted = ketch.read_parquet(str(tmp_path), schema_hints={"x": ketch.DataType.float64()})
    assert hinted.schema().field("x").type == pa.float64()
    assert hinted.to_pydict()["x"] == [1.0, 2.0, 3.0]
    with pytest.raises(KetchError, match="p0.parquet.*column 'y'"):
        ketch.read_parquet(str(tmp_path), schema_hints={"y": ketch.DataType.int64()}).to_arrow()


def test_missing_column_in_a_later_file_names_it(tmp_path):
    pq.write_table(pa.table({"x": [1], "y": [2]}), str(tmp_path / "p0.parquet"))
    pq.write_table(pa.table({"x": [3]}), str(tmp_path / "p1.parquet"))
    with pytest.raises(KetchError, match="p1.parquet.*'y'"):
        ketch.read_parquet(str(tmp_path)).to_arrow()


def test_count_rows_reads_one_column(sorted_file):
    path, _ = sorted_file
    df = ketch.read_parquet(path)
    assert df.count_rows() == N


@pytest.fixture
def s3(moto_s3) -> Iterator[tuple[object, object]]:
    config, client = moto_s3
    client.create_bucket(Bucket="tables")
    yield config, client


def test_read_parquet_from_s3_with_pruning(s3, sorted_file):
    config, client = s3
    path, table = sorted_file
    for i in range(2):
        client.put_object(Bucket="tables", Key=f"data/part-{i}.parquet", Body=open(path, "rb").read())
    df = ketch.read_parquet("s3://tables/data/*.parquet", io_config=config).where(col("a") < 10).select("a")
    stats = scan_stats(df)
    assert df.to_pydict()["a"] == list(range(10)) * 2
    assert stats["row_groups_read"] == 2 and stats["row_groups_pruned"] == 2 * (N // RG) - 2
    csv_body = b"k,v\n1,x\n2,y\n"
    client.put_object(Bucket="tables", Key="csv/a.csv", Body=csv_body)
    assert ketch.read_csv("s3://tables/csv/a.csv", io_config=config).to_pydict() == {
        "k": [1, 2],
        "v": ["x", "y"],
    }


def test_columns_argument_reads_only_those(sorted_file):
    path, table = sorted_file
    df = ketch.read_parquet(path, columns=["s", "a"])
    assert df.column_names == ["s", "a"]
    assert "Projection pushdown = [a, s]" in optimized_plan(df)
    assert df.to_arrow().equals(table.select(["s", "a"]))
    with pytest.raises(KetchError, match="zz"):
        ketch.read_parquet(path, columns=["zz"])
    with pytest.raises(TypeError):
        ketch.read_parquet(path, columns="a")


def test_dictionary_encoded_strings_come_back_as_strings(tmp_path):
    """Low-cardinality string columns are decoded as dictionaries and expanded after the filter:
    the result has the file's string type, nulls included, whether or not the filter reads them."""
    table = pa.table(
        {
            "s": pa.array(["a", "b", None, "a"] * 2500, pa.string()),
            "ls": pa.array(["x", None, "yy", "zzz"] * 2500, pa.large_string()),
            "n": pa.array(range(10_000), pa.int64()),
        }
    )
    path = str(tmp_path / "dict.parquet")
    pq.write_table(table, path, row_group_size=1_000)
    assert "RLE_DICTIONARY" in str(pq.read_metadata(path).row_group(0).column(0).encodings)
    out = ketch.read_parquet(path).where(col("n") > 9_990).to_arrow()
    assert out.schema == table.schema
    assert out.equals(table.slice(9_991))
    on_string = ketch.read_parquet(path).where(col("s") == "b").select("s", "ls", "n").to_arrow()
    assert on_string.equals(table.filter(pc.equal(table.column("s"), "b")))
    grouped = ketch.read_parquet(path).groupby("s").agg(col("n").count().alias("c")).sort("s").to_pydict()
    assert grouped == {"s": ["a", "b", None], "c": [5000, 2500, 2500]}


def test_filters_on_dictionary_columns_match_row_by_row_evaluation(tmp_path):
    """Predicates on one dictionary-encoded string column run on the dictionary's values; nulls,
    negations and ORs must give what evaluating every row gives."""
    values = ["train", "test", None, "val", "test", "train", None, "holdout"] * 500
    table = pa.table({"split": pa.array(values, pa.string()), "i": pa.array(range(len(values)), pa.int64())})
    path = str(tmp_path / "splits.parquet")
    pq.write_table(table, path, row_group_size=700)
    reference = ketch.from_arrow(table)
    predicates = [
        col("split") == "test",
        col("split") != "test",
        ~(col("split") == "train"),
        (col("split") == "val") | (col("split") == "holdout"),
        (col("split") > "t") & (col("i") > 100),
        col("split").is_null(),
        col("split") < "u",
    ]
    for predicate in predicates:
        got = ketch.read_parquet(path).where(predicate).to_arrow()
        want = reference.where(predicate).to_arrow()
        assert got.equals(want), predicate
    # The string column comes back as strings, and errors after the filter still name source rows.
    assert ketch.read_parquet(path).where(col("split") == "val").to_arrow().schema == table.schema


def test_limit_stops_before_later_files(tmp_path):
    for i in range(8):
        pq.write_table(
            pa.table({"a": pa.array(range(i * 100, i * 100 + 100), pa.int64())}), tmp_path / f"{i}.parquet"
        )
    with ketch.execution_config_ctx(num_compute_threads=1):
        df = ketch.read_parquet(str(tmp_path)).where(col("a") >= 0).limit(50)
        stats = scan_stats(df)
    assert df.to_pydict()["a"] == list(range(50))
    # One row group is emitted, the read-ahead window holds one more: later files are never read.
    assert stats["files_read"] <= 2 and stats["scan_tasks"] <= 2 and stats["rows_read"] <= 200
    everything = scan_stats(ketch.read_parquet(str(tmp_path)).where(col("a") >= 0))
    assert everything["files_read"] == 8


def test_limit_with_partition_filter_opens_only_the_files_it_reaches(tmp_path):
    for part in ("x", "y"):
        (tmp_path / f"p={part}").mkdir()
        for i in range(4):
            table = pa.table({"a": pa.array(range(i * 10, i * 10 + 10), pa.int64())})
            pq.write_table(table, tmp_path / f"p={part}" / f"{i}.parquet")
    df = ketch.read_parquet(str(tmp_path), hive_partitioning=True).where(col("p") == "y").limit(15)
    # Every row of a p=y file passes: footers are read in order, in waves of 1 then 2 files, until
    # 15 rows are covered; the fourth p=y file is never opened.
    assert "1 file past the limit not opened" in optimized_plan(df)
    assert df.to_pydict() == {"a": list(range(15)), "p": ["y"] * 15}
    # A filter on data columns needs every footer (statistics): none is skipped.
    assert "past the limit not opened" not in optimized_plan(
        ketch.read_parquet(str(tmp_path), hive_partitioning=True).where(col("a") > 5).limit(3)
    )
