"""Table functions in FROM: read_parquet / read_csv / read_json call Ketch's readers."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ketch
from ketch.sql import InvalidSQLException


def test_read_parquet_and_csv_in_from(tmp_path):
    pq.write_table(pa.table({"a": [1, 2, 3], "b": ["x", "y", None]}), tmp_path / "p.parquet")
    (tmp_path / "c.csv").write_text("a;b\n1;x\n2;y\n")
    got = ketch.sql(
        f"SELECT p.a, b FROM read_parquet('{tmp_path / 'p.parquet'}') AS p WHERE a > 1 ORDER BY a",
        register_globals=False,
    )
    assert got.to_pydict() == {"a": [2, 3], "b": ["y", None]}
    got = ketch.sql(
        f"SELECT * FROM read_csv('{tmp_path / 'c.csv'}', delimiter => ';')", register_globals=False
    )
    assert got.to_pydict() == {"a": [1, 2], "b": ["x", "y"]}


def test_table_function_errors(tmp_path):
    with pytest.raises(InvalidSQLException, match="table function 'read_delta'"):
        ketch.sql("SELECT * FROM read_delta('x')", register_globals=False)
    with pytest.raises(InvalidSQLException, match="unexpected keyword argument 'nope'"):
        ketch.sql(f"SELECT * FROM read_csv('{tmp_path}/c.csv', nope => 1)", register_globals=False)
    with pytest.raises(InvalidSQLException, match="arguments must be literals"):
        ketch.sql("SELECT * FROM read_parquet(x)", register_globals=False)
