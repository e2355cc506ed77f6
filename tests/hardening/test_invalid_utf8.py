"""Invalid UTF-8 inside a Parquet string column fails at the scan, naming the file, the column
and the row (it used to pass unchecked and reach serialize(..., "json") as invalid JSON)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ketch
from ketch.errors import KetchValueError

BAD = pa.array([b"ok"] * 1000 + [b"\xff\xfebad"] + [b"after"] * 5, pa.binary()).view(pa.string())


@pytest.mark.parametrize(
    "column, row",
    [
        (BAD, 1000),
        (BAD.dictionary_encode(), 1000),
        (pa.ListArray.from_arrays([0, 600, 1006], BAD), 1),
        (pa.StructArray.from_arrays([BAD], ["inner"]), 1000),
    ],
    ids=["string", "dictionary", "list", "struct"],
)
def test_invalid_utf8_names_file_column_and_row(tmp_path, column, row):
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"id": list(range(len(column))), "s": column}), path)
    with pytest.raises(
        KetchValueError, match=rf"bad\.parquet.*invalid UTF-8 in string column 's' at source row {row}"
    ):
        ketch.read_parquet(str(path)).collect()


def test_valid_strings_and_binary_columns_read_as_before(tmp_path):
    path = tmp_path / "good.parquet"
    table = pa.table({"s": ["héllo", "wörld", None], "b": pa.array([b"\xff", b"ok", None], pa.binary())})
    pq.write_table(table, path)
    assert ketch.read_parquet(str(path)).to_pydict() == table.to_pydict()


def test_a_column_not_read_is_not_checked(tmp_path):
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"id": list(range(len(BAD))), "s": BAD}), path)
    assert ketch.read_parquet(str(path)).select("id").count_rows() == len(BAD)
    assert sum(ketch.read_parquet(str(path)).select("id").to_pydict()["id"]) == sum(range(len(BAD)))


def test_a_sequence_split_between_two_values_is_invalid(tmp_path):
    # "\xc3" then "\xa9": valid UTF-8 ("é") when the bytes are read together, invalid per value
    split = pa.array([b"ok", b"\xc3", b"\xa9", b"fine"], pa.binary()).view(pa.string())
    path = tmp_path / "split.parquet"
    pq.write_table(pa.table({"s": split}), path, use_dictionary=False)
    with pytest.raises(KetchValueError, match=r"invalid UTF-8 in string column 's' at source row 1"):
        ketch.read_parquet(str(path)).collect()
