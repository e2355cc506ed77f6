"""The Stats line explain(show_all=True) prints under each node of the optimized logical and the
physical plan: rows (exact for in-memory data and unfiltered Parquet footers), bytes, a filter's
selectivity and the number of partitions."""

from __future__ import annotations

import io
import re

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import ketch
from ketch import col

_UNITS = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}


def _sections(df: ketch.DataFrame) -> tuple[str, str, str]:
    buf = io.StringIO()
    df.explain(show_all=True, file=buf)
    text = buf.getvalue()
    unoptimized, rest = text.split("== Optimized Logical Plan ==")
    optimized, physical = rest.split("== Physical Plan ==")
    return unoptimized, optimized, physical


def _stats(section: str) -> list[dict[str, str]]:
    """The Stats entries of a rendered plan, top node first, as {key: value} (values as printed)."""
    out = []
    for match in re.finditer(r"Stats = \{ (.*) \}", section):
        out.append(dict(part.split(" = ", 1) for part in match.group(1).split(", ") if " = " in part))
    return out


def _rows(entry: dict[str, str]) -> tuple[int, bool]:
    """(rows, exact) of a Stats entry."""
    if "Num rows" in entry:
        return int(entry["Num rows"].replace(",", "")), True
    return int(entry["Approx num rows"].replace(",", "")), False


def _bytes(entry: dict[str, str]) -> float:
    value, unit = (entry.get("Size bytes") or entry["Approx size bytes"]).split(" ")
    return float(value) * _UNITS[unit]


def _table(n: int = 1000) -> pa.Table:
    return pa.table(
        {
            "a": pa.array(range(n), pa.int64()),
            "b": pa.array([i * 0.37 for i in range(n)], pa.float64()),
            "s": pa.array([f"row-{i:06d}" for i in range(n)], pa.large_string()),
        }
    )


@pytest.fixture
def parquet_file(tmp_path) -> tuple[str, pa.Table]:
    table = _table()
    path = str(tmp_path / "t.parquet")
    pq.write_table(table, path, row_group_size=250)
    return path, table


def test_in_memory_rows_and_bytes_are_exact():
    table = _table()
    _, optimized, physical = _sections(ketch.from_arrow(table))
    for section in (optimized, physical):
        (entry,) = _stats(section)
        assert _rows(entry) == (1000, True)
        assert entry["Num rows"] == "1,000"
        assert "Size bytes" in entry  # exact: the batches' Arrow buffers
        assert abs(_bytes(entry) - table.nbytes) <= 0.05 * 1024
        assert entry["Num partitions"] == "1"
        assert "Selectivity" not in entry


def test_unoptimized_plan_has_no_stats(parquet_file):
    path, _ = parquet_file
    unoptimized, optimized, physical = _sections(ketch.read_parquet(path).where(col("a") > 3))
    assert "Stats" not in unoptimized
    # Every node of the optimized and the physical plan has one.
    for section in (optimized, physical):
        assert len(_stats(section)) == section.count("* ") > 0


def test_parquet_rows_come_exact_from_footers_and_bytes_from_column_sizes(parquet_file):
    path, table = parquet_file
    _, optimized, physical = _sections(ketch.read_parquet(path))
    (entry,) = _stats(optimized)
    assert _rows(entry) == (1000, True)
    assert "Approx size bytes" in entry
    assert table.nbytes / 2 <= _bytes(entry) <= table.nbytes * 2
    assert _stats(physical) == [entry]

    # Only the columns read count.
    (entry,) = _stats(_sections(ketch.read_parquet(path).select("a"))[1])
    assert _rows(entry) == (1000, True)
    only_a = table.select(["a"]).nbytes
    assert only_a / 2 <= _bytes(entry) <= only_a * 2
    assert _bytes(entry) < table.nbytes / 2


def test_filter_shows_selectivity_and_scales_rows(parquet_file):
    path, table = parquet_file
    # Pushed into the scan: the scan shows the selectivity.
    (entry,) = _stats(_sections(ketch.read_parquet(path).where(col("a") > 3))[1])
    assert entry["Selectivity"] == "0.25"
    assert _rows(entry) == (250, False)

    # A filter node over in-memory data.
    _, optimized, physical = _sections(ketch.from_arrow(table).where(col("a") > 3))
    for section in (optimized, physical):
        filt, source = _stats(section)
        assert filt["Selectivity"] == "0.25" and "Selectivity" not in source
        assert _rows(filt) == (250, False) and _rows(source) == (1000, True)
        assert _bytes(filt) == pytest.approx(_bytes(source) / 4, rel=0.05)


def test_limit_and_global_aggregate_rows_are_exact():
    df = ketch.from_arrow(_table())
    top = _stats(_sections(df.limit(10))[1])[0]
    assert _rows(top) == (10, True)
    top = _stats(_sections(df.agg(col("a").sum()))[1])[0]
    assert _rows(top) == (1, True)
    top = _stats(_sections(df.where(col("a") > 1).limit(10))[1])[0]
    assert _rows(top) == (10, False)


def test_project_bytes_follow_the_columns_kept():
    table = _table()
    entries = _stats(_sections(ketch.from_arrow(table).select("a"))[1])
    project, source = entries
    assert _rows(project) == (1000, True)
    only_a = table.select(["a"]).nbytes
    assert only_a / 2 <= _bytes(project) <= only_a * 2


@pytest.mark.parametrize(
    ("make", "partitions"),
    [
        (lambda df: df.into_partitions(4), 4),
        (lambda df: df.repartition(8), 8),
        (lambda df: df.repartition(3, "a"), 3),
        (lambda df: df.into_partitions(4).sort("a"), 1),
        (lambda df: df.into_partitions(4).with_column("c", col("a") + 1), 4),
    ],
)
def test_num_partitions(make, partitions):
    _, optimized, physical = _sections(make(ketch.from_arrow(_table())))
    for section in (optimized, physical):
        top = _stats(section)[0]
        assert top["Num partitions"] == str(partitions)
        assert _rows(top) == (1000, True)


def test_csv_rows_are_approximate_from_file_size(tmp_path):
    table = _table()
    path = str(tmp_path / "t.csv")
    pacsv.write_csv(table, path)
    (entry,) = _stats(_sections(ketch.read_csv(path))[1])
    rows, exact = _rows(entry)
    assert not exact and rows > 0
    assert "Approx size bytes" in entry and _bytes(entry) > 0


def test_join_and_concat_estimates():
    left = ketch.from_pydict({"k": list(range(100)), "x": list(range(100))})
    right = ketch.from_pydict({"k": list(range(40)), "y": list(range(40))})
    top = _stats(_sections(left.concat(left))[1])[0]
    assert _rows(top) == (200, True)
    top = _stats(_sections(left.join(right, on="k"))[1])[0]
    assert _rows(top) == (100, False)
    assert top["Num partitions"] == "1"


def test_bytes_are_written_with_binary_units():
    n = 200_000
    table = pa.table({"a": pa.array(range(n), pa.int64())})
    (entry,) = _stats(_sections(ketch.from_arrow(table))[1])
    assert entry["Num rows"] == "200,000"
    assert entry["Size bytes"] == f"{n * 8 / 1024**2:.1f} MiB"
