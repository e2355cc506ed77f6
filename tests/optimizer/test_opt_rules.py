"""Optimizer rules: each test builds a query, asserts the shape of the optimized plan (what
explain(show_all=True) prints) and that the result equals the unoptimized semantics."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ketch
from ketch import col, lit


@pytest.fixture
def data(tmp_path):
    n = 10_000
    table = pa.table(
        {
            "a": pa.array(range(n), pa.int64()),
            "b": pa.array([i * 0.5 for i in range(n)]),
            "s": pa.array([f"s{i % 7}" for i in range(n)]),
        }
    )
    path = str(tmp_path / "t.parquet")
    pq.write_table(table, path, row_group_size=1000)
    return path, table


def plans(df) -> tuple[str, str]:
    buf = io.StringIO()
    df.explain(show_all=True, file=buf)
    text = buf.getvalue()
    unoptimized = text[text.index("== Unoptimized") : text.index("== Optimized")]
    optimized = text[text.index("== Optimized") : text.index("== Physical")]
    return unoptimized, optimized


def nodes(plan_text: str) -> list[str]:
    """The node labels of a rendered plan, top to bottom (first word after '* ')."""
    return [
        line.split("* ", 1)[1].split(":")[0].split(" ")[0] for line in plan_text.splitlines() if "* " in line
    ]


def test_explain_show_all_prints_before_and_after(data):
    path, _ = data
    before, after = plans(ketch.read_parquet(path).where(col("a") > 5).select("a"))
    assert nodes(before) == ["Project", "Filter", "ScanParquet"]
    assert nodes(after) == ["ScanParquet"]
    assert "Filter pushdown = None" in before
    assert "Filter pushdown = (col(a) > lit(5))" in after
    assert "Projection pushdown = [a]" in after


def test_constant_folding(data):
    path, table = data
    df = (
        ketch.read_parquet(path)
        .select((col("a") + lit(1) * lit(2)).alias("x"))
        .where(col("x") > lit(3) + lit(4))
    )
    _, after = plans(df)
    assert "lit(1) * lit(2)" not in after and "lit(3) + lit(4)" not in after
    assert "Filter pushdown = ((col(a) + lit(2)) > lit(7))" in after
    assert df.to_pydict()["x"] == [a + 2 for a in table.column("a").to_pylist() if a + 2 > 7]


def test_folding_keeps_output_names_and_types():
    df = ketch.from_pydict({"a": [1, 2]}).select(col("a"), (lit(2) * lit(3)).alias("six"), lit(1.5) + lit(1))
    _, after = plans(df)
    assert "lit(6) as six" in after
    out = df.to_arrow()
    assert out.column_names == ["a", "six", "literal"]
    assert out.column("six").to_pylist() == [6, 6]
    assert out.column("literal").to_pylist() == [2.5, 2.5]


def test_boolean_simplification_drops_always_true_filter(data):
    path, table = data
    df = ketch.read_parquet(path).where(lit(True)).where((col("a") < 3) & lit(True))
    _, after = plans(df)
    assert "Filter pushdown = (col(a) < lit(3))" in after
    assert df.to_pydict()["a"] == [0, 1, 2]
    always = ketch.read_parquet(path).where(lit(True) | (col("a") < 3))
    _, after = plans(always)
    assert "Filter pushdown = None" in after
    assert always.count_rows() == table.num_rows


def test_false_filter_keeps_schema_and_no_rows(data):
    path, _ = data
    out = ketch.read_parquet(path).where(lit(False) & (col("a") > 1)).to_arrow()
    assert out.num_rows == 0 and out.column_names == ["a", "b", "s"]


def test_filter_passes_projection_with_cheap_expression_but_not_udf(data):
    path, table = data

    @ketch.func
    def plus_one(x: int) -> int:
        return x + 1

    df = ketch.read_parquet(path).with_column("u", plus_one(col("a"))).where(col("b") > 4000.0)
    _, after = plans(df)
    # The filter reads b, not u: it goes below the UDF and into the scan.
    assert nodes(after)[-1] == "ScanParquet" and "Filter:" not in after
    assert "Filter pushdown = (col(b) > lit(4000))" in after
    out = df.to_pydict()
    assert out["u"] == [
        a + 1
        for a, b in zip(table.column("a").to_pylist(), table.column("b").to_pylist(), strict=True)
        if b > 4000
    ]

    on_udf = ketch.read_parquet(path).with_column("u", plus_one(col("a"))).where(col("u") > 9990)
    _, after = plans(on_udf)
    assert "Filter: (col(u) > lit(9990))" in after  # the filter on the UDF's output stays above it
    assert on_udf.to_pydict()["u"] == list(range(9991, 10001))


def test_filter_through_sort_and_join_sides(data):
    path, table = data
    right = ketch.from_pydict({"k": [1, 2, 3, 4], "w": ["x", "y", "z", "w"]})
    df = (
        ketch.read_parquet(path)
        .sort("a", desc=True)
        .join(right, left_on="a", right_on="k")
        .where((col("b") > 0.5) & (col("w") != "z"))
    )
    _, after = plans(df)
    assert "Filter pushdown = (col(b) > lit(0.5))" in after
    assert 'Filter: (col(w) != lit("z"))' in after
    lines = after.splitlines()
    # Right-side filter sits below the join, above the in-memory source.
    assert lines.index(next(line for line in lines if "Filter: (col(w)" in line)) > lines.index(
        next(line for line in lines if "* Join" in line)
    )
    assert sorted(df.to_pydict()["a"]) == [2, 4]


def test_limit_pushdown_through_projections_and_into_scan(data):
    path, table = data

    calls = []

    @ketch.func
    def record(x: int) -> int:
        calls.append(x)
        return x

    df = ketch.read_parquet(path).with_column("r", record(col("a"))).limit(7)
    _, after = plans(df)
    names = nodes(after)
    assert names.index("Limit") > names.index("Project")  # the limit runs before the UDF
    assert "Limit pushdown = 7" in after
    assert df.to_pydict()["r"] == list(range(7))
    assert len(calls) == 7  # the UDF saw exactly the 7 rows


def test_limit_pushdown_prunes_row_groups_and_reads_little(data):
    path, table = data
    df = ketch.read_parquet(path).limit(1500)
    _, after = plans(df)
    assert "2 row groups" in after and "row groups past the limit skipped" in after
    stats = df.explain_analyze(file=io.StringIO())
    assert stats.scan["row_groups_read"] == 2
    assert stats.scan["rows_read"] == 2000
    assert df.to_pydict()["a"] == list(range(1500))


def test_limit_with_filter_stops_reading_early(data):
    path, _ = data
    with ketch.execution_config_ctx(num_compute_threads=1, morsel_size_rows=1000):
        df = ketch.read_parquet(path).where(col("s") == "s0").limit(10)
        stats = df.explain_analyze(file=io.StringIO())
    assert df.to_pydict()["a"] == list(range(0, 70, 7))
    assert stats.scan["rows_read"] < 10_000


def test_nested_limits_take_the_smaller():
    df = ketch.from_pydict({"a": list(range(100))}).limit(10).limit(20)
    _, after = plans(df)
    assert after.count("Limit: 10") == 1 and "Limit: 20" not in after
    assert df.count_rows() == 10


def test_merge_and_drop_projections(data):
    path, table = data
    df = ketch.read_parquet(path).select("a", "b", "s").select((col("a") * 2).alias("a2"), "b").select("a2")
    _, after = plans(df)
    assert nodes(after) == ["Project", "ScanParquet"]
    assert "(col(a) * lit(2)) as a2" in after
    assert df.to_pydict()["a2"] == [a * 2 for a in table.column("a").to_pylist()]


def test_projections_not_merged_when_work_would_repeat(data):
    path, _ = data
    df = ketch.read_parquet(path).select((col("a") * 3).alias("t")).select((col("t") + col("t")).alias("u"))
    _, after = plans(df)
    assert nodes(after) == ["Project", "Project", "ScanParquet"]
    assert df.limit(3).to_pydict()["u"] == [0, 6, 12]


def test_udfs_and_downloads_split_after_pushdowns(data, tmp_path):
    path, _ = data

    @ketch.func
    def ident(x: int) -> int:
        return x

    df = (
        ketch.read_parquet(path)
        .select(ident(col("a")).alias("y"), (col("b") * 2).alias("b2"))
        .where(col("b2") < 4)
    )
    _, after = plans(df)
    udf_line = next(line for line in after.splitlines() if "ident(" in line)
    assert "lit(2)" not in udf_line  # the UDF has a projection of its own
    assert "col(b)," not in udf_line  # columns nobody reads are not passed through the UDF's workers
    assert "Filter pushdown = ((col(b) * lit(2)) < lit(4))" in after
    assert df.to_pydict() == {"y": [0, 1, 2, 3], "b2": [0.0, 1.0, 2.0, 3.0]}


def test_disabling_a_rule():
    """PushDownFilter moves a filter below the projection it sits on; disabled, the filter stays
    on top."""
    df = ketch.from_pydict({"a": [1, 2, 3], "b": [4, 5, 6]}).select("a", (col("b") * 2).alias("c"))
    plan = df.where(col("a") > 1)._plan

    def node_order(optimized) -> list[str]:
        lines = [line.lstrip("* ") for line in repr(optimized).splitlines() if line.startswith("*")]
        return [line.split(":")[0] for line in lines]

    assert node_order(plan.optimize()) == ["Project", "Filter", "InMemorySource"]
    assert node_order(plan.optimize(["PushDownFilter"])) == ["Filter", "Project", "InMemorySource"]
    assert df.where(col("a") > 1).to_pydict() == {"a": [2, 3], "c": [10, 12]}


def test_literals_take_the_column_type_only_when_exact():
    table = pa.table(
        {
            "i8": pa.array([-5, 0, 100, 127], pa.int8()),
            "f32": pa.array([0.1, 0.5, 24.0, 30.0], pa.float32()),
            "s": pa.array(["R", "A", "R", "N"], pa.string()),
        }
    )
    df = ketch.from_arrow(table)
    cases = [
        (col("i8") < 100, [-5, 0]),
        (col("i8") == 300, []),  # does not fit int8: compared as int64
        (col("i8") > -(2**40), [-5, 0, 100, 127]),
        (col("f32") == 0.5, [0]),
        (col("f32") < 24, [-5, 0]),
        (col("s") == "R", [-5, 100]),
        (lit("N") == col("s"), [127]),
    ]
    for predicate, expected in cases:
        assert df.where(predicate).to_pydict()["i8"] == expected, predicate
    # 0.1 has no exact float32 value: the column is compared as float64, as Arrow would.
    assert df.where(col("f32") == 0.1).count_rows() == 0


def test_conjuncts_split_around_a_udf_projection():
    calls: list[int] = []

    @ketch.func
    def slow(x: int) -> int:
        calls.append(x)
        return x * 10

    df = ketch.from_pydict({"b": [i % 10 for i in range(1000)], "x": list(range(1000)), "s": ["7"] * 1000})
    q = df.with_column("u", slow(col("x"))).where((col("b") == 3) & (col("u") > 5000))
    _, after = plans(q)
    assert nodes(after) == ["Filter", "Project", "Filter", "InMemorySource"]
    assert "Filter: (col(u) > lit(5000))" in after and "Filter: (col(b) == lit(3))" in after
    out = q.to_pydict()
    assert out["x"] == [x for x in range(1000) if x % 10 == 3 and x * 10 > 5000]
    assert len(calls) == 100  # the UDF saw only the rows with b == 3
    # A conjunct that can fail (a cast) does not move ahead of one that stays above the UDF.
    q2 = df.with_column("u", slow(col("x"))).where(
        (col("u") > 5000) & (col("s").cast(ketch.DataType.int64()) > 2)
    )
    _, after = plans(q2)
    assert nodes(after) == ["Filter", "Project", "InMemorySource"]
    assert "* Filter: ((col(u) > lit(5000)) & (cast(col(s) as int64) > lit(2)))" in after
    assert q2.count_rows() == 499
