"""Test data and a reference SQL engine for the SQL tests.

DuckDB is not in the venv, so the reference is SQLite (Python's sqlite3, 3.39+ for RIGHT/FULL
joins and NULLS FIRST/LAST) loaded with the same tables. Queries compared with it avoid the places
where SQLite's semantics differ from Daft's (integer division, case-insensitive LIKE (switched
off below), default null order); the rest are checked against pandas or hand-computed values.

Not a test module: the test files import it as ``from sql_oracle import ...``."""

from __future__ import annotations

import math
import sqlite3
from typing import Any

import numpy as np
import pyarrow as pa

import ketch

_rng = np.random.default_rng(20261202)
_N = 60
_NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", None]


def _maybe_null(values: list[Any], every: int, offset: int = 0) -> list[Any]:
    return [None if (i + offset) % every == 0 else v for i, v in enumerate(values)]


EMP = pa.table(
    {
        "id": pa.array(range(1, _N + 1), pa.int64()),
        "name": pa.array([_NAMES[i % len(_NAMES)] for i in range(_N)], pa.string()),
        "dept_id": pa.array(_maybe_null([int(x) for x in _rng.integers(1, 6, _N)], 9, 4), pa.int64()),
        "salary": pa.array(
            _maybe_null([float(round(x, 2)) for x in _rng.uniform(30, 150, _N)], 7, 3), pa.float64()
        ),
        "age": pa.array(_maybe_null([int(x) for x in _rng.integers(20, 65, _N)], 11, 5), pa.int64()),
        "city": pa.array(
            _maybe_null([["Paris", "Lyon", "Nice", "lyon"][i % 4] for i in range(_N)], 13), pa.string()
        ),
    }
)
DEPT = pa.table(
    {
        "dept_id": pa.array([1, 2, 3, 4, 6, None], pa.int64()),
        "dept_name": pa.array(["eng", "ops", "sales", "hr", "legal", "ghost"], pa.string()),
        "budget": pa.array([1000.0, 250.5, None, 80.0, 10.0, 5.0], pa.float64()),
    }
)
# Same shape as EMP's (id, name) for set operations: overlapping ids, duplicates, a null.
OTHER = pa.table(
    {
        "id": pa.array([1, 2, 2, 3, 61, 62, None, None], pa.int64()),
        "name": pa.array(["alice", "bob", "bob", "zed", "yan", "yan", None, None], pa.string()),
    }
)
TABLES = {"emp": EMP, "dept": DEPT, "other": OTHER}


def frames() -> dict[str, ketch.DataFrame]:
    return {name: ketch.from_arrow(table) for name, table in TABLES.items()}


_connection: sqlite3.Connection | None = None


def sqlite() -> sqlite3.Connection:
    global _connection
    if _connection is None:
        conn = sqlite3.connect(":memory:")
        conn.execute("PRAGMA case_sensitive_like = ON")
        for name, table in TABLES.items():
            cols = ", ".join(table.column_names)
            conn.execute(f"CREATE TABLE {name} ({cols})")
            marks = ", ".join("?" for _ in table.column_names)
            conn.executemany(
                f"INSERT INTO {name} VALUES ({marks})", [tuple(r.values()) for r in table.to_pylist()]
            )
        _connection = conn
    return _connection


def _norm(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value):
            return None
        rounded = round(value, 6)
        return int(rounded) if rounded == int(rounded) else rounded
    return value


def _norm_rows(rows: list[tuple]) -> list[tuple]:
    return [tuple(_norm(v) for v in row) for row in rows]


def _sort_key(row: tuple) -> tuple:
    return tuple((v is None, str(type(v)), v if v is not None else 0) for v in row)


def ketch_rows(query: str, **extra: ketch.DataFrame) -> tuple[list[str], list[tuple]]:
    df = ketch.sql(query, register_globals=False, **frames(), **extra)
    table = df.to_arrow()
    return table.column_names, [tuple(r.values()) for r in table.to_pylist()]


def oracle_rows(query: str) -> list[tuple]:
    return sqlite().execute(query).fetchall()


def check(
    query: str, ordered: bool = False, reference: str | None = None, columns: list[str] | None = None
) -> None:
    """Runs ``query`` on Ketch and ``reference`` (default: the same text) on SQLite and compares
    the rows (in order when ``ordered``; floats to 6 digits, booleans as 0/1)."""
    names, got = ketch_rows(query)
    want = oracle_rows(reference or query)
    got_n, want_n = _norm_rows(got), _norm_rows(want)
    if not ordered:
        got_n, want_n = sorted(got_n, key=_sort_key), sorted(want_n, key=_sort_key)
    assert got_n == want_n, f"{query}\n got:  {got_n[:10]}\n want: {want_n[:10]}"
    if columns is not None:
        assert names == columns


def rows(query: str, **extra: ketch.DataFrame) -> list[tuple]:
    """Ketch's rows, normalized as ``check`` compares them."""
    return _norm_rows(ketch_rows(query, **extra)[1])


def sorted_rows(values: list[tuple]) -> list[tuple]:
    return sorted(_norm_rows(values), key=_sort_key)
