"""Bad input to read_parquet / read_csv / read_json: every failure is a ketch.errors exception whose
message names the file (and the row, where the reader knows it)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ketch
from ketch import col
from ketch.errors import (
    ColumnNotFoundError,
    KetchError,
    KetchFileNotFoundError,
    KetchIOError,
    KetchTypeError,
    KetchValueError,
)

READERS = {"parquet": ketch.read_parquet, "csv": ketch.read_csv, "json": ketch.read_json}


def write_parquet(path: Path, data: dict | None = None) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(data or {"a": list(range(100)), "s": [f"s{i}" for i in range(100)]}), path)
    return str(path)


def write_text(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def names(path: str) -> str:
    """A ``match=`` pattern for a message that quotes the path."""
    return re.escape(f"'{path}'")


# -- paths --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(READERS))
def test_glob_matching_nothing(tmp_path, fmt):
    pattern = str(tmp_path / "nothing" / "*.data")
    with pytest.raises(KetchFileNotFoundError, match=re.escape(pattern)) as info:
        READERS[fmt](pattern)
    assert isinstance(info.value, FileNotFoundError)


@pytest.mark.parametrize("fmt", list(READERS))
def test_missing_path_and_directory_without_matching_files(tmp_path, fmt):
    missing = str(tmp_path / "missing.file")
    with pytest.raises(KetchFileNotFoundError, match=re.escape(missing)):
        READERS[fmt](missing)
    write_text(tmp_path / "d" / "notes.txt", "nothing to read\n")
    with pytest.raises(KetchFileNotFoundError, match=re.escape(str(tmp_path / "d"))):
        READERS[fmt](str(tmp_path / "d"))


def test_second_list_entry_matching_nothing_is_named(tmp_path):
    good = write_parquet(tmp_path / "good.parquet")
    pattern = str(tmp_path / "more" / "*.parquet")
    with pytest.raises(KetchFileNotFoundError, match=re.escape(pattern)):
        ketch.read_parquet([good, pattern])


def test_empty_path_list(tmp_path):
    with pytest.raises(ValueError, match="at least one path"):
        ketch.read_csv([])


# -- Parquet ------------------------------------------------------------------------------------------


def truncate(src: str, dst: Path, keep: float = 0.5) -> str:
    data = Path(src).read_bytes()
    dst.write_bytes(data[: int(len(data) * keep)])
    return str(dst)


def test_truncated_parquet_first_file(tmp_path):
    good = write_parquet(tmp_path / "good.parquet")
    bad = truncate(good, tmp_path / "truncated.parquet")
    with pytest.raises(KetchIOError, match=names(bad)):
        ketch.read_parquet(bad)


def test_truncated_parquet_later_file_in_list(tmp_path):
    first = write_parquet(tmp_path / "a.parquet")
    second = write_parquet(tmp_path / "b.parquet")
    bad = truncate(first, tmp_path / "c_truncated.parquet", keep=0.9)
    df = ketch.read_parquet([first, second, bad])  # the schema comes from the first file
    with pytest.raises(KetchIOError, match=names(bad)) as info:
        df.to_arrow()
    assert first not in str(info.value) and second not in str(info.value)


def test_parquet_with_corrupt_data_pages_names_the_file(tmp_path):
    good = write_parquet(tmp_path / "good.parquet")
    data = bytearray(Path(good).read_bytes())
    data[100:600] = b"\xab" * 500  # inside the column chunks; the footer stays valid
    bad = tmp_path / "corrupt.parquet"
    bad.write_bytes(bytes(data))
    with pytest.raises(KetchError, match=names(str(bad))):
        ketch.read_parquet([good, str(bad)]).to_arrow()


@pytest.mark.parametrize(
    "content",
    [b"hello, this is not parquet\n" * 10, b"", b"PAR1" + b"\x00" * 20 + b"PAR1"],
    ids=["text", "empty", "magic-only"],
)
def test_not_parquet_at_all(tmp_path, content):
    bad = tmp_path / "fake.parquet"
    bad.write_bytes(content)
    with pytest.raises(KetchIOError, match=names(str(bad))):
        ketch.read_parquet(str(bad))
    good = write_parquet(tmp_path / "good.parquet")
    with pytest.raises(KetchIOError, match=names(str(bad))):
        ketch.read_parquet([good, str(bad)]).to_arrow()


def test_schema_hint_contradicting_parquet_data(tmp_path):
    path = write_parquet(tmp_path / "s.parquet", {"s": ["1", "2", "x"], "n": [1, 2, 3]})
    df = ketch.read_parquet(path, schema_hints={"s": ketch.DataType.int64()})
    with pytest.raises(KetchTypeError, match=names(path)) as info:
        df.to_arrow()
    assert "'s'" in str(info.value) and "int64" in str(info.value)


def test_schema_hint_contradicting_only_a_later_parquet_file(tmp_path):
    first = write_parquet(tmp_path / "a.parquet", {"s": ["1", "2"]})
    second = write_parquet(tmp_path / "b.parquet", {"s": ["3", "four"]})
    df = ketch.read_parquet([first, second], schema_hints={"s": ketch.DataType.int64()})
    with pytest.raises(KetchTypeError, match=names(second)):
        df.to_arrow()


def test_later_parquet_file_missing_a_column(tmp_path):
    first = write_parquet(tmp_path / "a.parquet", {"a": [1], "s": ["x"]})
    second = write_parquet(tmp_path / "b.parquet", {"a": [2]})
    with pytest.raises(ColumnNotFoundError, match=names(second) + ".*'s'"):
        ketch.read_parquet([first, second]).to_arrow()
    # Not reading the missing column is fine.
    assert ketch.read_parquet([first, second]).select("a").to_pydict() == {"a": [1, 2]}


# -- schema hints and schemas -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(READERS))
def test_schema_hint_for_a_column_that_does_not_exist(tmp_path, fmt):
    if fmt == "parquet":
        path = write_parquet(tmp_path / "f.parquet", {"a": [1]})
    elif fmt == "csv":
        path = write_text(tmp_path / "f.csv", "a\n1\n")
    else:
        path = write_text(tmp_path / "f.jsonl", '{"a": 1}\n')
    with pytest.raises(ColumnNotFoundError, match="'nope'") as info:
        READERS[fmt](path, schema_hints={"nope": ketch.DataType.int64()})
    assert "a: int64" in str(info.value)  # lists the columns that exist


def test_schema_that_is_not_a_dict(tmp_path):
    path = write_text(tmp_path / "f.csv", "a\n1\n")
    with pytest.raises(TypeError, match="dict"):
        ketch.read_csv(path, schema_hints=[("a", ketch.DataType.int64())])
    with pytest.raises(TypeError, match="'a'"):
        ketch.read_csv(path, schema_hints={"a": "int64"})


# -- CSV ----------------------------------------------------------------------------------------------


def test_csv_row_with_too_many_fields_first_file(tmp_path):
    path = write_text(tmp_path / "wide.csv", "a,b\n1,2\n3,4,5\n")
    with pytest.raises(KetchError, match=names(path) + r".*Row #3"):
        ketch.read_csv(path).to_arrow()


def test_csv_row_with_too_many_fields_later_file(tmp_path):
    good = write_text(tmp_path / "a.csv", "a,b\n1,2\n")
    bad = write_text(tmp_path / "b.csv", "a,b\n1,2\n3,4\n5,6,7\n")
    with pytest.raises(KetchError, match=names(bad) + r".*Row #4") as info:
        ketch.read_csv([good, bad]).to_arrow()
    assert good not in str(info.value)


def test_csv_bad_row_deep_in_a_later_file_has_its_row_number(tmp_path):
    good = write_text(tmp_path / "a.csv", "a,b\n1,2\n")
    n = 80_000  # more than one 1 MiB block
    bad = write_text(tmp_path / "b.csv", "a,b\n" + "".join(f"{i},{i}\n" for i in range(n)) + "1,2,3\n")
    with pytest.raises(KetchError, match=names(bad) + rf".*Row #{n + 2}\b"):
        ketch.read_csv([good, bad]).count_rows()


def test_csv_row_with_too_few_fields(tmp_path):
    path = write_text(tmp_path / "short.csv", "a,b,c\n1,2,3\n4,5\n")
    with pytest.raises(KetchError, match=names(path) + r".*Row #3"):
        ketch.read_csv(path).to_arrow()


def test_csv_value_not_converting_under_schema_hint(tmp_path):
    path = write_text(tmp_path / "vals.csv", "a,b\n1,2\nx,4\n")
    with pytest.raises(KetchValueError, match=names(path) + r".*Row #3.*int64.*'x'"):
        ketch.read_csv(path, schema_hints={"a": ketch.DataType.int64()}).to_arrow()


def test_csv_value_not_converting_in_later_file(tmp_path):
    good = write_text(tmp_path / "a.csv", "a,b\n1,2\n")
    bad = write_text(tmp_path / "b.csv", "a,b\n3,4\n5.5,6\n")
    # a is int64 (inferred from the first file); 5.5 is not.
    with pytest.raises(KetchValueError, match=names(bad) + r".*Row #3"):
        ketch.read_csv([good, bad]).to_arrow()
    # Declared float64, both files read.
    df = ketch.read_csv([good, bad], schema_hints={"a": ketch.DataType.float64()})
    assert df.to_pydict()["a"] == [1.0, 3.0, 5.5]


def test_csv_later_file_missing_a_column(tmp_path):
    first = write_text(tmp_path / "a.csv", "a,b\n1,x\n")
    second = write_text(tmp_path / "b.csv", "a\n2\n")
    with pytest.raises(ColumnNotFoundError, match=names(second) + ".*'b'"):
        ketch.read_csv([first, second]).to_arrow()


@pytest.mark.parametrize("delimiter", [";;", "", "ab"])
def test_invalid_delimiter(tmp_path, delimiter):
    path = write_text(tmp_path / "f.csv", "a\n1\n")
    with pytest.raises(ValueError, match="delimiter must be a single character"):
        ketch.read_csv(path, delimiter=delimiter)


# -- JSON ---------------------------------------------------------------------------------------------


def test_json_line_that_is_not_json_first_file(tmp_path):
    path = write_text(tmp_path / "bad.jsonl", '{"a": 1}\nnot json\n{"a": 3}\n')
    with pytest.raises(KetchError, match=names(path) + ".*JSON parse error"):
        ketch.read_json(path).to_arrow()


def test_json_line_that_is_not_json_later_file(tmp_path):
    good = write_text(tmp_path / "a.jsonl", '{"a": 1}\n{"a": 2}\n')
    bad = write_text(tmp_path / "b.jsonl", '{"a": 3}\n{"a": 4,\n')
    with pytest.raises(KetchError, match=names(bad) + ".*JSON parse error") as info:
        ketch.read_json([good, bad]).to_arrow()
    assert good not in str(info.value)


def test_json_value_not_converting_under_schema_hint(tmp_path):
    path = write_text(tmp_path / "f.jsonl", '{"a": 1.0}\n{"a": 2.5}\n')
    with pytest.raises(KetchError, match=names(path) + ".*int64"):
        ketch.read_json(path, schema_hints={"a": ketch.DataType.int64()}).to_arrow()


def test_json_bad_line_deep_in_a_file_has_its_row_number(tmp_path):
    # Arrow's JSON reader counts rows within each 1 MiB block; the scan adds the earlier blocks'.
    n = 100_000  # more than one 1 MiB block
    path = tmp_path / "deep.jsonl"
    path.write_text("".join(json.dumps({"i": i}) + "\n" for i in range(n)) + "oops\n")
    with pytest.raises(KetchError, match=names(str(path))) as info:
        ketch.read_json(str(path)).count_rows()
    rows = [int(r) for r in re.findall(r"row (\d+)", str(info.value))]
    assert rows, str(info.value)
    assert all(r in (n, n + 1) for r in rows), str(info.value)  # 0- or 1-based line of "oops"


# -- hive partitions ----------------------------------------------------------------------------------


def test_inconsistent_hive_partition_keys(tmp_path):
    a = write_parquet(tmp_path / "t" / "year=2024" / "f.parquet", {"x": [1]})
    b = write_parquet(tmp_path / "t" / "month=5" / "f.parquet", {"x": [2]})
    with pytest.raises(KetchValueError, match="partition keys") as info:
        ketch.read_parquet(str(tmp_path / "t"), hive_partitioning=True)
    assert a in str(info.value) and b in str(info.value)
    # Without hive partitioning the same files read fine.
    assert sorted(ketch.read_parquet(str(tmp_path / "t")).to_pydict()["x"]) == [1, 2]


def test_hive_file_without_partition_directory(tmp_path):
    write_text(tmp_path / "t" / "k=1" / "f.csv", "x\n1\n")
    stray = write_text(tmp_path / "t" / "stray.csv", "x\n2\n")
    with pytest.raises(KetchValueError, match=re.escape(stray)):
        ketch.read_csv(str(tmp_path / "t"), hive_partitioning=True)


def test_hive_keys_in_different_order(tmp_path):
    write_text(tmp_path / "t" / "a=1" / "b=2" / "f.jsonl", '{"x": 1}\n')
    write_text(tmp_path / "t" / "b=3" / "a=4" / "f.jsonl", '{"x": 2}\n')
    with pytest.raises(KetchValueError, match="partition keys"):
        ketch.read_json(str(tmp_path / "t"), hive_partitioning=True)


def test_filter_on_missing_column_names_available_columns(tmp_path):
    path = write_text(tmp_path / "f.csv", "a,b\n1,2\n")
    with pytest.raises(ColumnNotFoundError, match="nope"):
        ketch.read_csv(path).where(col("nope") > 1)


def test_corrupt_data_page_names_file_and_row_group(tmp_path):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "corrupt.parquet"
    table = pa.table({"a": np.arange(100_000), "b": np.random.default_rng(0).random(100_000)})
    pq.write_table(table, str(path), row_group_size=10_000)
    offset = pq.read_metadata(str(path)).row_group(5).column(1).data_page_offset
    data = bytearray(path.read_bytes())
    for i in range(offset + 20, offset + 2_000):
        data[i] = (data[i] * 7 + 13) % 256
    path.write_bytes(bytes(data))
    with pytest.raises(KetchError, match=r"corrupt\.parquet.*row group 5"):
        ketch.read_parquet(str(path)).to_arrow()
    # Row groups before the damage are still readable on their own.
    assert ketch.read_parquet(str(path)).where(ketch.col("a") < 10_000).count_rows() == 10_000
