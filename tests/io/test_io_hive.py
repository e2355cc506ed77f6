"""Hive-partitioned reads (``key=value`` directories) for Parquet, CSV and JSON: partition columns
and their types, the null partition, pruning of whole files by filters on partition columns (scan
metrics and explain text), filters mixing partition and data columns, selecting only partition
columns, counts. Results are compared with pandas filtering of the same data."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scan_helpers import optimized_plan, scan_stats

import ketch
from ketch import col
from ketch.errors import KetchError

# Each test runs on the native and on the Ray runner (tests/conftest.py: runner).
pytestmark = pytest.mark.usefixtures("runner")
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
PARTITIONS = [
    ("2023", "US"),
    ("2023", "FR"),
    ("2024", "US"),
    ("2024", HIVE_NULL),
    ("2024", "FR"),
    ("2025", "US"),
]
FORMATS = ["parquet", "csv", "json"]
EXT = {"parquet": "parquet", "csv": "csv", "json": "jsonl"}


def write_file(path: Path, fmt: str, data: dict[str, list]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "parquet":
        pq.write_table(pa.table(data), path)
    elif fmt == "csv":
        names = list(data)
        lines = [",".join(names)] + [
            ",".join("" if v is None else str(v) for v in row) for row in zip(*data.values(), strict=True)
        ]
        path.write_text("\n".join(lines) + "\n")
    else:
        rows = [dict(zip(data, row, strict=True)) for row in zip(*data.values(), strict=True)]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def read(fmt: str, path, **kwargs) -> ketch.DataFrame:
    reader = {"parquet": ketch.read_parquet, "csv": ketch.read_csv, "json": ketch.read_json}[fmt]
    return reader(str(path) if isinstance(path, Path) else path, **kwargs)


def make_dataset(root: Path, fmt: str) -> pd.DataFrame:
    """Writes one file per partition (two rows each) and returns the whole table, in the order a
    directory read gives it (sorted paths), with the partition columns appended."""
    frames = []
    for k, (year, country) in enumerate(PARTITIONS):
        path = root / f"year={year}" / f"country={country}" / f"part-0.{EXT[fmt]}"
        data = {"id": [2 * k, 2 * k + 1], "v": [k * 1.5, k * 1.5 + 0.25]}
        write_file(path, fmt, data)
        frame = pd.DataFrame(data)
        frame["year"] = int(year)
        frame["country"] = None if country == HIVE_NULL else country
        frames.append((str(path), frame))
    frames.sort(key=lambda item: item[0])
    return pd.concat([f for _, f in frames], ignore_index=True)


def to_records(table: dict[str, list]) -> list[tuple]:
    return list(zip(*table.values(), strict=True))


def expected_records(frame: pd.DataFrame) -> list[tuple]:
    frame = frame.astype(object).where(frame.notna(), None)
    return [tuple(r) for r in frame.itertuples(index=False)]


@pytest.fixture(params=FORMATS)
def dataset(request, tmp_path) -> tuple[str, Path, pd.DataFrame]:
    fmt = request.param
    root = tmp_path / f"table_{fmt}"
    return fmt, root, make_dataset(root, fmt)


def test_full_read_appends_partition_columns(dataset):
    fmt, root, expected = dataset
    df = read(fmt, root, hive_partitioning=True)
    schema = df.schema()
    assert schema.names == ["id", "v", "year", "country"]
    assert schema.field("year").type == pa.int64()
    assert pa.types.is_string(schema.field("country").type) or pa.types.is_large_string(
        schema.field("country").type
    )
    got = df.to_pydict()
    assert to_records(got) == expected_records(expected)
    assert got["country"].count(None) == 2


def test_without_hive_partitioning_there_are_no_partition_columns(dataset):
    fmt, root, expected = dataset
    df = read(fmt, root)
    assert df.column_names == ["id", "v"]
    assert df.to_pydict()["id"] == expected.id.tolist()


def test_filter_on_partition_column_prunes_files(dataset):
    fmt, root, expected = dataset
    df = read(fmt, root, hive_partitioning=True).where(col("year") == 2024)
    plan = optimized_plan(df)
    assert "Partition columns = {year: int64, country: string}" in plan
    assert "Files pruned by partition values = 3" in plan
    assert "Filter pushdown = (col(year) == lit(2024))" in plan
    stats = scan_stats(df)
    assert stats["files_pruned"] == 3
    assert stats["files_read"] == 3
    assert stats["rows_read"] == 6
    assert to_records(df.to_pydict()) == expected_records(expected[expected.year == 2024])


def test_range_filter_on_partition_column(dataset):
    fmt, root, expected = dataset
    df = read(fmt, root, hive_partitioning=True).where(col("year") >= 2024)
    stats = scan_stats(df)
    assert stats["files_pruned"] == 2
    assert stats["files_read"] == 4
    assert to_records(df.to_pydict()) == expected_records(expected[expected.year >= 2024])


def test_filter_on_null_partition(dataset):
    fmt, root, expected = dataset
    df = read(fmt, root, hive_partitioning=True).where(col("country").is_null())
    stats = scan_stats(df)
    assert stats["files_pruned"] == 5
    assert stats["files_read"] == 1
    assert to_records(df.to_pydict()) == expected_records(expected[expected.country.isna()])


def test_equality_filter_drops_the_null_partition(dataset):
    fmt, root, expected = dataset
    df = read(fmt, root, hive_partitioning=True).where(col("country") != "US")
    stats = scan_stats(df)
    # country != 'US' is null for the null partition: that file is pruned too.
    assert stats["files_pruned"] == 4
    assert stats["files_read"] == 2
    got = df.to_pydict()
    assert got["country"] == ["FR", "FR", "FR", "FR"]
    assert to_records(got) == expected_records(
        expected[expected.country.notna() & (expected.country != "US")]
    )


def test_filter_mixing_partition_and_data_columns(dataset):
    fmt, root, expected = dataset
    df = read(fmt, root, hive_partitioning=True).where((col("country") == "US") & (col("v") > 1.0))
    plan = optimized_plan(df)
    assert "Files pruned by partition values = 3" in plan
    stats = scan_stats(df)
    assert stats["files_pruned"] == 3
    if fmt == "parquet":
        # 2023/US holds v in [0, 0.25]: its only row group is pruned by statistics, so the file
        # is not read either.
        assert stats["row_groups_pruned"] == 1
        assert stats["files_read"] == 2
    else:
        assert stats["files_read"] == 3
    want = expected[(expected.country == "US") & (expected.v > 1.0)]
    assert len(want) == 4
    assert to_records(df.to_pydict()) == expected_records(want)


def test_or_of_partition_and_data_column_prunes_nothing(dataset):
    fmt, root, expected = dataset
    df = read(fmt, root, hive_partitioning=True).where((col("year") == 2023) | (col("id") == 9))
    stats = scan_stats(df)
    assert stats["files_pruned"] == 0
    assert stats["files_read"] == 6
    want = expected[(expected.year == 2023) | (expected.id == 9)]
    assert to_records(df.to_pydict()) == expected_records(want)


def test_filter_pruning_every_file_gives_an_empty_result_with_schema(dataset):
    fmt, root, _ = dataset
    df = read(fmt, root, hive_partitioning=True).where(col("year") == 1999)
    stats = scan_stats(df)
    assert stats["files_pruned"] == 6
    assert stats["files_read"] == 0
    assert stats["rows_read"] == 0
    table = df.to_arrow()
    assert table.num_rows == 0
    assert table.schema.names == ["id", "v", "year", "country"]


def test_select_only_partition_columns(dataset):
    fmt, root, expected = dataset
    df = read(fmt, root, hive_partitioning=True).select("country", "year")
    got = df.to_pydict()
    assert list(got) == ["country", "year"]
    assert to_records(got) == expected_records(expected[["country", "year"]])


def test_select_partition_column_with_data_filter(dataset):
    fmt, root, expected = dataset
    df = read(fmt, root, hive_partitioning=True).where(col("v") < 3.5).select("year")
    got = df.to_pydict()
    assert list(got) == ["year"]
    assert got["year"] == expected[expected.v < 3.5].year.tolist()


def test_count_rows(dataset):
    fmt, root, expected = dataset
    assert read(fmt, root, hive_partitioning=True).count_rows() == len(expected)
    assert read(fmt, root, hive_partitioning=True).where(col("year") == 2023).count_rows() == 4
    assert (
        read(fmt, root, hive_partitioning=True)
        .where((col("year") == 2024) & col("country").not_null())
        .count_rows()
        == 4
    )


def test_limit_with_partition_filter(dataset):
    fmt, root, expected = dataset
    df = read(fmt, root, hive_partitioning=True).where(col("country") == "FR").limit(3)
    assert to_records(df.to_pydict()) == expected_records(expected[expected.country == "FR"].head(3))


def test_glob_with_hive_partitioning(dataset):
    fmt, root, expected = dataset
    # Partitions are read below the glob's base directory (Daft's rule): "year" is above it.
    df = read(fmt, str(root / "year=2024" / "*" / f"*.{EXT[fmt]}"), hive_partitioning=True)
    assert "year" not in df.column_names
    assert to_records(df.to_pydict()) == expected_records(
        expected[expected.year == 2024].drop(columns="year")
    )
    whole = read(fmt, str(root / "*" / "*" / f"*.{EXT[fmt]}"), hive_partitioning=True)
    assert to_records(whole.where(col("year") == 2024).to_pydict()) == expected_records(
        expected[expected.year == 2024]
    )


# -- partition column types ---------------------------------------------------------------------------


def partition_table(tmp_path: Path, values: list[str], fmt: str = "parquet") -> dict[str, list]:
    root = tmp_path / "t"
    for i, value in enumerate(values):
        write_file(root / f"p={value}" / f"f.{EXT[fmt]}", fmt, {"x": [i]})
    return read(fmt, root, hive_partitioning=True).to_pydict()


def partition_type(tmp_path: Path, values: list[str]) -> pa.DataType:
    root = tmp_path / "t"
    for i, value in enumerate(values):
        write_file(root / f"p={value}" / "f.parquet", "parquet", {"x": [i]})
    return read("parquet", root, hive_partitioning=True).schema().field("p").type


def test_integer_partitions_are_int64(tmp_path):
    assert partition_type(tmp_path, ["1", "-2", "30"]) == pa.int64()
    assert partition_table(tmp_path, ["1", "-2", "30"]) == {"x": [1, 0, 2], "p": [-2, 1, 30]}


def test_number_partitions_are_float64(tmp_path):
    got = partition_table(tmp_path, ["1", "2.5", "1e3"])
    assert got == {"x": [0, 2, 1], "p": [1.0, 1000.0, 2.5]}
    assert partition_type(tmp_path, ["1", "2.5"]) == pa.float64()


def test_mixed_partitions_are_strings(tmp_path):
    got = partition_table(tmp_path, ["1", "a", "2.5"])
    assert got == {"x": [0, 2, 1], "p": ["1", "2.5", "a"]}


def test_null_and_empty_partitions(tmp_path):
    got = partition_table(tmp_path, ["3", HIVE_NULL, ""])
    assert sorted(got["p"], key=lambda v: (v is None, v)) == [3, None, None]
    assert partition_type(tmp_path, ["3", HIVE_NULL]) == pa.int64()


def test_all_null_partition_is_a_string_column(tmp_path):
    got = partition_table(tmp_path, [HIVE_NULL])
    assert got == {"x": [0], "p": [None]}
    assert pa.types.is_string(partition_type(tmp_path, [HIVE_NULL]))


def test_url_encoded_partition_values(tmp_path):
    got = partition_table(tmp_path, ["New%20York", "a%2Fb"])
    assert got == {"x": [0, 1], "p": ["New York", "a/b"]}


def test_underscored_digits_are_not_integers(tmp_path):
    # Python's int() accepts "1_000"; a partition named that is the string "1_000".
    got = partition_table(tmp_path, ["1_000", "2"])
    assert got == {"x": [0, 1], "p": ["1_000", "2"]}


def test_integer_past_int64_is_float64(tmp_path):
    got = partition_table(tmp_path, ["99999999999999999999", "1"])
    assert got == {"x": [1, 0], "p": [1.0, 1e20]}


@pytest.mark.parametrize("fmt", FORMATS)
def test_partition_types_for_every_format(tmp_path, fmt):
    got = partition_table(tmp_path, ["0.5", "2"], fmt)
    assert got == {"x": [0, 1], "p": [0.5, 2.0]}


def test_filter_on_float_and_string_partitions(tmp_path):
    root = tmp_path / "t"
    for i, (r, name) in enumerate([("0.5", "a"), ("1.5", "b"), ("2.5", "a")]):
        write_file(root / f"r={r}" / f"name={name}" / "f.parquet", "parquet", {"x": [i]})
    df = ketch.read_parquet(str(root), hive_partitioning=True).where((col("r") > 1.0) & (col("name") == "a"))
    stats = scan_stats(df)
    assert stats["files_pruned"] == 2
    assert df.to_pydict() == {"x": [2], "r": [2.5], "name": ["a"]}


def test_csv_without_headers_and_hive(tmp_path):
    root = tmp_path / "t"
    for k in (1, 2):
        f = root / f"k={k}" / "f.csv"
        f.parent.mkdir(parents=True)
        f.write_text(f"{k}0,a\n{k}1,b\n")
    df = ketch.read_csv(str(root), has_headers=False, hive_partitioning=True).where(col("k") == 2)
    assert df.to_pydict() == {"column_1": [20, 21], "column_2": ["a", "b"], "k": [2, 2]}


def test_partition_column_also_stored_in_the_file_is_an_error(tmp_path):
    write_file(tmp_path / "t" / "x=5" / "f.parquet", "parquet", {"x": [1]})
    with pytest.raises(KetchError, match="'x'"):
        ketch.read_parquet(str(tmp_path / "t"), hive_partitioning=True)
