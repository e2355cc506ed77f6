"""ketch.sql: CTEs, subqueries in FROM, set operations, bindings, globals and parameters."""

from __future__ import annotations

import pytest
from sql_oracle import EMP, OTHER, check, frames, rows, sorted_rows

import ketch
from ketch.sql import InvalidSQLException

ORACLE_QUERIES = [
    "WITH rich AS (SELECT id, name, dept_id FROM emp WHERE salary > 90) SELECT name, count(*) AS n FROM rich "
    "GROUP BY name",
    "WITH a AS (SELECT dept_id, avg(salary) AS s FROM emp GROUP BY dept_id), "
    "b AS (SELECT * FROM a WHERE s > 80) "
    "SELECT b.dept_id, b.s, d.dept_name FROM b JOIN dept d ON b.dept_id = d.dept_id",
    "SELECT t.dept_id, t.n FROM (SELECT dept_id, count(*) AS n FROM emp GROUP BY dept_id) AS t WHERE t.n > 5",
    "SELECT x.k, x.v FROM (SELECT id AS k, age AS v FROM emp WHERE age > 30) x "
    "JOIN dept d ON x.k = d.dept_id",
    "SELECT id, name FROM emp WHERE id < 5 UNION SELECT id, name FROM other",
    "SELECT id, name FROM emp WHERE id < 5 UNION ALL SELECT id, name FROM other",
    "SELECT id, name FROM other INTERSECT SELECT id, name FROM emp",
    "SELECT id, name FROM other EXCEPT SELECT id, name FROM emp",
    "SELECT city FROM emp UNION SELECT dept_name FROM dept",
    "SELECT id, name FROM emp WHERE dept_id IN (SELECT dept_id FROM dept WHERE budget > 50) AND age > 30",
    "SELECT name, count(*) AS n FROM emp WHERE id IN (SELECT id FROM other) GROUP BY name",
    "SELECT id, salary FROM emp WHERE salary > (SELECT avg(salary) FROM emp)",
    "SELECT id, salary - (SELECT min(salary) FROM emp) AS above_min, (SELECT count(*) FROM dept) AS n "
    "FROM emp",
    "SELECT id FROM emp WHERE age > (SELECT max(age) FROM emp WHERE id > 1000)",  # empty: NULL
    "SELECT id FROM emp WHERE id < 3 UNION ALL SELECT id FROM other WHERE id > 60",
]


@pytest.mark.parametrize("query", ORACLE_QUERIES)
def test_query_matches_sqlite(query):
    check(query)


def test_cte_over_the_table_it_hides():
    # A non-recursive CTE's body sees the outer table of the same name (Postgres, DuckDB);
    # SQLite calls it circular, so the reference uses another name.
    check(
        "WITH emp AS (SELECT id, age FROM emp WHERE age > 50) SELECT * FROM emp",
        reference="WITH old AS (SELECT id, age FROM emp WHERE age > 50) SELECT * FROM old",
    )


def test_set_operation_with_order_and_limit():
    check(
        "SELECT id FROM emp WHERE id > 55 UNION SELECT id FROM other ORDER BY id DESC NULLS LAST LIMIT 4",
        ordered=True,
    )


def test_intersect_all_and_except_all_match_multiset_arithmetic():
    left = [(r["id"], r["name"]) for r in OTHER.to_pylist()]
    right = [("bob", 2), ("bob", 2)]
    df_right = ketch.from_pydict({"id": [2, 2, None], "name": ["bob", "bob", None]})
    got_i = rows("SELECT id, name FROM other INTERSECT ALL SELECT id, name FROM r", r=df_right)
    got_e = rows("SELECT id, name FROM other EXCEPT ALL SELECT id, name FROM r", r=df_right)
    assert sorted_rows(got_i) == sorted_rows([(2, "bob"), (2, "bob"), (None, None)])
    remaining = list(left)
    for row in [(2, "bob"), (2, "bob"), (None, None)]:
        remaining.remove(row)
    assert sorted_rows(got_e) == sorted_rows(remaining)
    assert right


def test_cte_shadows_a_binding_and_nests():
    got = rows("WITH emp AS (SELECT id FROM other WHERE id > 60) SELECT count(*) AS n FROM emp")
    assert got == [(2,)]
    got = rows("WITH a AS (SELECT id FROM emp), b AS (SELECT id FROM a WHERE id <= 3) SELECT sum(id) FROM b")
    assert got == [(6,)]


def test_globals_and_locals_are_tables():
    people = ketch.from_arrow(EMP)  # noqa: F841 - found by name from the caller's locals
    got = ketch.sql("SELECT count(*) AS n FROM people WHERE age > 30").to_pydict()
    assert got == {"n": [sum(1 for a in EMP.column("age").to_pylist() if a is not None and a > 30)]}
    # Explicit bindings win over variables.
    other_people = ketch.from_pydict({"id": [1]})
    assert ketch.sql("SELECT count(*) AS n FROM people", people=other_people).to_pydict() == {"n": [1]}
    with pytest.raises(InvalidSQLException, match="Table not found: 'people'"):
        ketch.sql("SELECT * FROM people", register_globals=False)


def test_parameters_as_daft():
    emp = frames()["emp"]
    q = ketch.sql("SELECT id FROM emp WHERE age > ? AND name LIKE ?", params=[40, "a%"], emp=emp)
    want = [r["id"] for r in EMP.to_pylist() if (r["age"] or 0) > 40 and (r["name"] or "").startswith("a")]
    assert sorted(q.to_pydict()["id"]) == sorted(want)
    q = ketch.sql("SELECT id FROM emp WHERE id >= $1 AND id < $2", params=[3, 5], emp=emp)
    assert sorted(q.to_pydict()["id"]) == [3, 4]
    q = ketch.sql("SELECT id FROM emp WHERE name = :who", params={"who": "bob"}, emp=emp)
    assert sorted(q.to_pydict()["id"]) == [r["id"] for r in EMP.to_pylist() if r["name"] == "bob"]
    with pytest.raises(ValueError, match="Not enough parameters"):
        ketch.sql("SELECT id FROM emp WHERE id > ? AND id < ?", params=[1], emp=emp)


def test_same_plan_as_the_dataframe_api():
    emp = frames()["emp"]
    from_sql = ketch.sql("SELECT id, age FROM emp WHERE age > 30", register_globals=False, emp=emp)
    from_api = emp.where(ketch.col("age") > 30).select(
        ketch.col("id").alias("id"), ketch.col("age").alias("age")
    )
    assert "Filter" in _explain(from_sql) and _explain(from_sql) == _explain(from_api)
    assert from_sql.to_pydict() == from_api.to_pydict()


def _explain(df: ketch.DataFrame) -> str:
    import io

    out = io.StringIO()
    df.explain(file=out)
    return out.getvalue()


def test_query_on_both_runners(runner):
    # Joins, grouping, a LIKE (a row-wise Python function in this build) and ORDER BY, on the
    # native runner and on the Ray runner (the plan is the same DataFrame plan).
    check(
        "SELECT d.dept_name, count(*) AS n, sum(e.age) AS s FROM emp e JOIN dept d ON e.dept_id = d.dept_id "
        "WHERE e.name LIKE '%a%' GROUP BY d.dept_name ORDER BY n DESC, d.dept_name",
        ordered=True,
    )
