"""current_date() / current_timestamp() read the clock when the query runs (as Daft), not when the
expression or the DataFrame is built: each collect of the same lazy DataFrame sees its own time."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

import ketch
from ketch import col
from ketch import functions as F


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _column(df: ketch.DataFrame, name: str) -> tuple[pa.DataType, list]:
    table = df.to_arrow()
    return table.schema.field(name).type, table.column(name).to_pylist()


def test_current_timestamp_is_taken_at_execution() -> None:
    # Two lazy queries built first, collected one after the other later. (A collected DataFrame
    # keeps its result, as Daft's does, so each query is collected once.)
    base = ketch.from_pydict({"x": [1, 2, 3]})
    queries = [base.select(F.current_timestamp().alias("t")) for _ in range(2)]
    bounds = []
    for df in queries:
        # Taken after the DataFrames were built: a value fixed at build time would be older.
        before = _utc_now()
        dtype, got = _column(df, "t")
        after = _utc_now()
        assert dtype == pa.timestamp("us")
        assert len(set(got)) == 1  # one morsel: one clock reading for all rows
        assert before <= got[0] <= after
        bounds.append((before, got[0], after))
    assert bounds[0][1] <= bounds[0][2] <= bounds[1][0] <= bounds[1][1]


def test_current_date_is_taken_at_execution() -> None:
    base = ketch.from_pydict({"x": [1, None]})
    for df in [base.select(F.current_date().alias("d"), col("x")) for _ in range(2)]:
        before = _utc_now().date()
        dtype, got = _column(df, "d")
        after = _utc_now().date()
        assert dtype == pa.date32()
        assert all(d in (before, after) for d in got)


def test_current_date_inside_an_expression() -> None:
    # Not folded to a literal when it is the argument of another call either.
    df = ketch.from_pydict({"x": [1]}).select(F.date_add(F.current_date(), 1).alias("d"))
    before = _utc_now().date()
    got = df.to_pydict()["d"][0]
    after = _utc_now().date()
    assert got in (before + dt.timedelta(days=1), after + dt.timedelta(days=1))


def test_current_time_types_at_plan_time() -> None:
    df = ketch.from_pydict({"x": [1]}).select(F.current_date().alias("d"), F.current_timestamp().alias("t"))
    schema = df.schema()
    assert schema.field("d").type == pa.date32() and schema.field("t").type == pa.timestamp("us")
