"""``lit(datetime.timedelta)``: a duration[us] literal built from its buffer (no pandas import), equal
to pyarrow's conversion and usable in timestamp arithmetic."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import ketch
from ketch import col, lit

DELTAS = [
    dt.timedelta(hours=36),
    dt.timedelta(days=-3, seconds=5, microseconds=7),
    dt.timedelta(microseconds=-1),
    dt.timedelta(0),
    dt.timedelta(days=10_000, microseconds=999_999),
]


@pytest.mark.parametrize("delta", DELTAS)
def test_timedelta_literal_matches_pyarrow(delta: dt.timedelta) -> None:
    t = ketch.from_pydict({"x": [1, 2]}).select(lit(delta).alias("d")).to_arrow()
    expected = pa.array([delta, delta], pa.duration("us"))
    assert t.column("d").type == pa.duration("us")
    assert t.column("d").combine_chunks().equals(expected)


@pytest.mark.parametrize("delta", DELTAS)
def test_timestamp_plus_and_minus_timedelta_literal(delta: dt.timedelta) -> None:
    values = [dt.datetime(2024, 2, 28, 23, 0, 0, 1), None, dt.datetime(1969, 12, 31, 12, 0)]
    ts = pa.array(values, pa.timestamp("us"))
    t = (
        ketch.from_arrow(pa.table({"ts": ts}))
        .select((col("ts") + lit(delta)).alias("plus"), (col("ts") - delta).alias("minus"))
        .to_arrow()
    )
    assert t.column("plus").to_pylist() == [None if v is None else v + delta for v in values]
    assert t.column("minus").to_pylist() == [None if v is None else v - delta for v in values]
    assert t.column("plus").combine_chunks().equals(pc.add(ts, pa.scalar(delta, pa.duration("us"))))


def test_timedelta_literal_does_not_import_pandas() -> None:
    code = (
        "import sys, datetime, ketch\n"
        "ketch.lit(datetime.timedelta(hours=1))\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
