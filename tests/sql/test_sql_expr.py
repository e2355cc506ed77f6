"""ketch.sql_expr and DataFrame.where / filter with a SQL predicate string."""

from __future__ import annotations

import pytest
from sql_oracle import EMP

import ketch
from ketch import col
from ketch.sql import InvalidSQLException


@pytest.fixture
def emp() -> ketch.DataFrame:
    return ketch.from_arrow(EMP)


def test_sql_expr_builds_expressions(emp):
    out = emp.with_column("x", ketch.sql_expr("age * 2 + dept_id")).select("age", "dept_id", "x").to_pydict()
    want = [
        None if a is None or d is None else a * 2 + d for a, d in zip(out["age"], out["dept_id"], strict=True)
    ]
    assert out["x"] == want
    assert repr(ketch.sql_expr("1 + 2")) == repr(ketch.lit(1) + ketch.lit(2))
    assert repr(ketch.sql_expr("a AND NOT b")) == repr(col("a") & ~col("b"))


def test_sql_expr_aggregates_in_agg(emp):
    got = (
        emp.groupby("dept_id")
        .agg(ketch.sql_expr("sum(age)").alias("s"), ketch.sql_expr("max(salary)"))
        .to_pydict()
    )
    frame = EMP.to_pandas()
    sums = frame.groupby("dept_id", dropna=False)["age"].sum(min_count=1)
    for key, total in zip(got["dept_id"], got["s"], strict=True):
        expected = sums[key] if key is not None else sums[sums.index.isna()].iloc[0]
        assert total == (None if expected != expected else int(expected))


def test_where_and_filter_take_sql_strings(emp):
    want = sorted(
        r["id"] for r in EMP.to_pylist() if r["age"] is not None and r["age"] < 30 and r["city"] is not None
    )
    got = emp.where("age < 30 AND city IS NOT NULL").to_pydict()["id"]
    assert sorted(got) == want
    got = emp.filter("name LIKE 'a%' OR dept_id IN (2, 4)").to_pydict()["id"]
    want = sorted(
        r["id"] for r in EMP.to_pylist() if (r["name"] or "").startswith("a") or r["dept_id"] in (2, 4)
    )
    assert sorted(got) == want


def test_where_string_errors(emp):
    with pytest.raises(InvalidSQLException, match="SQL error at Line: 1"):
        emp.where("age <")
    with pytest.raises(ketch.errors.ColumnNotFoundError, match="nope"):
        emp.where("nope > 1")


def test_sql_expr_refuses_statements():
    with pytest.raises(InvalidSQLException, match="takes an expression, not a statement"):
        ketch.sql_expr("SELECT 1")
    with pytest.raises(InvalidSQLException, match="SQL must be a str"):
        ketch.sql_expr(3)  # type: ignore[arg-type]


def test_a_function_plugs_in_with_one_line(emp):
    from ketch.sql import functions

    functions.register("double_it", build=lambda _name, args: args[0].expr * 2, nargs=(1,))
    functions.register("not_here_yet", method="no_such_namespace.method", nargs=(1,))
    try:
        got = ketch.sql(
            "SELECT id, double_it(id) AS d FROM emp WHERE id < 4", register_globals=False, emp=emp
        )
        assert sorted(zip(*got.to_pydict().values(), strict=True)) == [(1, 2), (2, 4), (3, 6)]
        with pytest.raises(
            InvalidSQLException, match=r"not_here_yet\(\) .* needs Expression.no_such_namespace"
        ):
            ketch.sql_expr("not_here_yet(id)")
    finally:
        del functions.FUNCTIONS["double_it"], functions.FUNCTIONS["not_here_yet"]
