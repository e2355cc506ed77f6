"""ketch.sql: joins (INNER, LEFT, RIGHT, FULL, CROSS, USING, self joins, extra ON conditions),
compared with SQLite."""

from __future__ import annotations

import pytest
from sql_oracle import DEPT, EMP, OTHER, check, ketch_rows, rows, sorted_rows

ORACLE_QUERIES = [
    "SELECT e.id, d.dept_name FROM emp e JOIN dept d ON e.dept_id = d.dept_id",
    "SELECT e.id, d.dept_name FROM emp e INNER JOIN dept d ON d.dept_id = e.dept_id WHERE d.budget > 50",
    "SELECT e.id, d.dept_name, d.budget FROM emp e LEFT JOIN dept d ON e.dept_id = d.dept_id",
    "SELECT e.id, d.dept_name FROM emp e RIGHT JOIN dept d ON e.dept_id = d.dept_id",
    "SELECT e.id, d.dept_id, d.dept_name FROM emp e FULL OUTER JOIN dept d ON e.dept_id = d.dept_id",
    "SELECT e.id, d.dept_name FROM emp e CROSS JOIN dept d WHERE e.id < 4",
    "SELECT e.id, d.dept_name FROM emp e, dept d WHERE e.dept_id = d.dept_id AND e.age > 50",
    "SELECT id, dept_name FROM emp JOIN dept USING (dept_id)",
    "SELECT dept_id, id, dept_name FROM emp LEFT JOIN dept USING (dept_id)",
    "SELECT a.id AS a_id, b.id AS b_id FROM emp a JOIN emp b ON a.dept_id = b.dept_id AND a.age = b.age "
    "WHERE a.id < b.id",
    "SELECT e.id, d.dept_name FROM emp e JOIN dept d ON e.dept_id = d.dept_id AND e.salary > d.budget / 10",
    "SELECT e.id, d.dept_name FROM emp e JOIN dept d ON e.dept_id + 1 = d.dept_id",
    "SELECT d.dept_name, count(e.id) AS n, avg(e.salary) AS s FROM dept d LEFT JOIN emp e "
    "ON e.dept_id = d.dept_id GROUP BY d.dept_name",
    "SELECT e.id, d.dept_name, o.name FROM emp e JOIN dept d ON e.dept_id = d.dept_id "
    "JOIN other o ON o.id = e.id",
    "SELECT o.id, o.name FROM other o WHERE o.id IN (1, 2, 61)",
]


def test_semi_and_anti_joins():
    emp_ids = {r["id"] for r in EMP.to_pylist()}
    other = OTHER.to_pylist()
    got = rows("SELECT o.id, o.name FROM other o SEMI JOIN emp e ON o.id = e.id")
    assert sorted_rows(got) == sorted_rows([(r["id"], r["name"]) for r in other if r["id"] in emp_ids])
    got = rows("SELECT o.id FROM other o ANTI JOIN emp e ON o.id = e.id")
    assert sorted_rows(got) == sorted_rows([(r["id"],) for r in other if r["id"] not in emp_ids])


def test_quoted_identifiers():
    import ketch

    spaced = ketch.from_pydict({"Col A": [1, 2, 3], "b": ["x", "y", "z"]})
    assert rows('SELECT "Col A" AS c, b FROM spaced WHERE "Col A" >= 2', spaced=spaced) == [
        (2, "y"),
        (3, "z"),
    ]


@pytest.mark.parametrize("query", ORACLE_QUERIES)
def test_join_matches_sqlite(query):
    check(query)


def test_full_join_using_merges_the_key():
    check(
        "SELECT dept_id, id, dept_name FROM emp FULL JOIN dept USING (dept_id)",
        reference="SELECT coalesce(e.dept_id, d.dept_id), e.id, d.dept_name FROM emp e "
        "FULL JOIN dept d ON e.dept_id = d.dept_id",
    )


def test_star_over_a_join_shows_each_column_once_with_daft_names():
    names, _ = ketch_rows("SELECT * FROM emp e JOIN dept d ON e.dept_id = d.dept_id")
    # The equal key appears once (as Daft's SQL join); other columns in FROM order.
    assert names == EMP.column_names + ["dept_name", "budget"]
    names, _ = ketch_rows("SELECT * FROM emp JOIN dept USING (dept_id)")
    assert names == EMP.column_names + ["dept_name", "budget"]
    names, _ = ketch_rows("SELECT * FROM other a JOIN other b ON a.id = b.id")
    assert names == ["id", "name", "right.name"]


def test_null_keys_never_match():
    _, got = ketch_rows("SELECT a.id FROM other a JOIN other b ON a.id = b.id")
    assert None not in [r[0] for r in got]
    assert sorted(r[0] for r in got) == [1, 2, 2, 2, 2, 3, 61, 62]


def test_dept_rows_present():
    assert DEPT.num_rows == 6
