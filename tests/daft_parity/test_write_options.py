"""Daft's writer options: write_parquet(single_file=True, write_success_file=True) and the CSV/JSON
date_format / timestamp_format, with values printed by Daft 0.7.26 for the same frames."""

from __future__ import annotations

import datetime
import json
import os

import pyarrow.parquet as pq
import pytest

import ketch
from ketch.errors import KetchNotImplementedError


@pytest.fixture
def df():
    return ketch.from_pydict(
        {
            "a": [1, 2, 3],
            "d": [datetime.date(2024, 1, 2)] * 3,
            "t": [datetime.datetime(2024, 1, 2, 3, 4, 5)] * 3,
        }
    )


def test_single_file_writes_one_file_at_the_path_and_replaces_it(df, tmp_path):
    target = str(tmp_path / "x.parquet")
    assert df.write_parquet(target, single_file=True).to_pydict() == {"path": [target]}  # Daft
    assert os.path.isfile(target) and pq.read_table(target).column("a").to_pylist() == [1, 2, 3]
    # Daft replaces the file (append mode too); several partitions still give one file
    again = df.into_partitions(3).with_column("a", ketch.col("a") * 10)
    assert again.write_parquet(target, single_file=True).to_pydict() == {"path": [target]}
    assert pq.read_table(target).column("a").to_pylist() == [10, 20, 30]
    nested = str(tmp_path / "sub" / "dir" / "y.parquet")
    assert df.write_parquet(nested, single_file=True).to_pydict() == {"path": [nested]}
    assert sorted(os.listdir(tmp_path)) == ["sub", "x.parquet"]  # no staging directory left


def test_single_file_of_no_rows_keeps_the_schema(tmp_path):
    target = str(tmp_path / "e.parquet")
    empty = ketch.from_pydict({"a": [1]}).where(ketch.col("a") > 5)
    assert empty.write_parquet(target, single_file=True).to_pydict() == {"path": [target]}
    assert pq.read_table(target).num_rows == 0 and pq.read_table(target).schema.names == ["a"]


def test_single_file_with_partition_cols_is_daft_value_error(df, tmp_path):
    with pytest.raises(ValueError, match=r"`single_file=True` cannot be combined with `partition_cols`."):
        df.write_parquet(str(tmp_path / "p"), single_file=True, partition_cols=["a"])


def test_write_success_file(df, tmp_path):
    written = df.write_parquet(str(tmp_path), write_success_file=True).to_pydict()["path"]
    assert sorted(os.listdir(tmp_path)) == sorted(["_SUCCESS", *(os.path.basename(p) for p in written)])
    assert os.path.getsize(tmp_path / "_SUCCESS") == 0


def test_csv_and_json_date_and_timestamp_formats(df, tmp_path):
    csv_path = df.write_csv(str(tmp_path / "c"), date_format="%d/%m/%Y", timestamp_format="%Y%m%d %H:%M")
    lines = open(csv_path.to_pydict()["path"][0]).read().splitlines()
    # Daft: 1,02/01/2024,20240102 03:04 (Ketch's Arrow writer quotes strings: same values)
    assert [line.replace('"', "") for line in lines[1:]] == [
        f"{a},02/01/2024,20240102 03:04" for a in (1, 2, 3)
    ]
    json_path = df.write_json(str(tmp_path / "j"), date_format="%d/%m/%Y", timestamp_format="%Y%m%d %H:%M")
    rows = [json.loads(line) for line in open(json_path.to_pydict()["path"][0])]
    assert rows == [{"a": a, "d": "02/01/2024", "t": "20240102 03:04"} for a in (1, 2, 3)]  # Daft


def test_options_not_supported_yet_say_so(df, tmp_path):
    with pytest.raises(KetchNotImplementedError, match="column_compression"):
        df.write_parquet(str(tmp_path), column_compression={"a": "zstd"})
    with pytest.raises(KetchNotImplementedError, match="ignore_null_fields"):
        df.write_json(str(tmp_path), ignore_null_fields=True)
    with pytest.raises(KetchNotImplementedError, match="delimiter"):
        df.write_csv(str(tmp_path), delimiter="|")
