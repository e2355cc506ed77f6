"""ketch.sql: projections, WHERE, ORDER BY, LIMIT and scalar expressions, compared with SQLite."""

from __future__ import annotations

import pytest
from sql_oracle import EMP, check, rows, sorted_rows

ORACLE_QUERIES = [
    # projection, aliases, *
    "SELECT * FROM emp",
    "SELECT id, name AS who, salary FROM emp",
    "SELECT e.id, e.city FROM emp AS e",
    "SELECT e.* FROM emp e WHERE e.id < 5",
    "SELECT DISTINCT city FROM emp",
    "SELECT DISTINCT dept_id, city FROM emp",
    # WHERE with comparisons, AND / OR / NOT, IS NULL, IN, BETWEEN, LIKE
    "SELECT id FROM emp WHERE salary > 100 AND age <= 40",
    "SELECT id FROM emp WHERE salary > 140 OR age < 22 OR NOT (id <> 3)",
    "SELECT id, dept_id FROM emp WHERE dept_id IS NULL",
    "SELECT id FROM emp WHERE salary IS NOT NULL AND city IS NOT NULL",
    "SELECT id FROM emp WHERE dept_id IN (1, 3, 5)",
    "SELECT id FROM emp WHERE dept_id NOT IN (1, 3, 5)",
    "SELECT id FROM emp WHERE name IN ('alice', 'judy')",
    "SELECT id FROM emp WHERE age BETWEEN 30 AND 40",
    "SELECT id FROM emp WHERE age NOT BETWEEN 30 AND 40",
    "SELECT id, name FROM emp WHERE name LIKE 'a%' OR name LIKE '_o%'",
    "SELECT id, city FROM emp WHERE city LIKE 'L%'",
    "SELECT id FROM emp WHERE name NOT LIKE '%a%'",
    "SELECT id FROM emp WHERE id = 7",
    # arithmetic and comparison as values
    "SELECT id, salary * 2 + 1 AS s, age - id AS d, -age AS n FROM emp",
    "SELECT id, salary / 4 AS q FROM emp",
    "SELECT id, age % 7 AS m, age > 40 AS old, salary >= 100 AS rich FROM emp",
    # CASE, CAST, COALESCE and other functions
    "SELECT id, CASE WHEN salary > 100 THEN 'high' WHEN salary > 60 THEN 'mid' ELSE 'low' END AS band "
    "FROM emp",
    "SELECT id, CASE dept_id WHEN 1 THEN 'one' WHEN 2 THEN 'two' END AS d FROM emp",
    "SELECT id, CAST(salary AS INT) AS s, CAST(age AS DOUBLE) AS a, CAST(id AS VARCHAR) AS t FROM emp",
    "SELECT id, COALESCE(dept_id, age, -1) AS c, NULLIF(dept_id, 2) AS n FROM emp",
    "SELECT id, upper(name) AS u, lower(city) AS l, length(name) AS n FROM emp",
    "SELECT id, abs(age - 40) AS a, round(salary, 1) AS r, round(salary) AS r0 FROM emp",
    "SELECT id, name || '@' || city AS tag FROM emp",
    "SELECT 1 + 2 AS three, 'x' AS s",
    "SELECT upper('ab') AS u, 1e3 AS x, 'it''s' AS q, -2.5 AS n, NULL AS z",
    "SELECT id FROM (SELECT id FROM emp WHERE age > 40)",
    "SELECT id FROM emp WHERE name IN ('alice', NULL)",
    "SELECT id FROM emp WHERE NOT dept_id IN (2)",
    "SELECT ID, Name FROM emp WHERE Id < 4",
    "SELECT id FROM emp WHERE city = 'Lyon' AND age > 30 OR dept_id = 2",
    "SELECT id, CASE WHEN age > 40 THEN salary END AS s FROM emp",
    "SELECT id FROM emp LIMIT 0",
]


@pytest.mark.parametrize("query", ORACLE_QUERIES)
def test_query_matches_sqlite(query):
    check(query)


ORDERED = [
    ("SELECT id, salary FROM emp ORDER BY salary DESC NULLS LAST, id", None),
    ("SELECT id, salary FROM emp ORDER BY salary ASC NULLS FIRST, id DESC", None),
    ("SELECT id, age FROM emp ORDER BY age NULLS LAST, id LIMIT 7", None),
    ("SELECT id, age FROM emp ORDER BY 2 DESC NULLS FIRST, 1 LIMIT 5", None),
    ("SELECT id AS k, age FROM emp ORDER BY k DESC LIMIT 3", None),
    ("SELECT id FROM emp ORDER BY salary * -1 NULLS LAST, id", None),  # key not in the output
    ("SELECT id, name FROM emp ORDER BY name NULLS LAST, id LIMIT 10 OFFSET 5", None),
]


@pytest.mark.parametrize("query,reference", ORDERED)
def test_ordered_query_matches_sqlite(query, reference):
    check(query, ordered=True, reference=reference)


def test_default_null_order_is_daft_s():
    # Without NULLS FIRST/LAST: nulls last ascending, first descending (Daft's rule).
    asc = rows("SELECT age FROM emp ORDER BY age")
    desc = rows("SELECT age FROM emp ORDER BY age DESC")
    ages = [a for a in EMP.column("age").to_pylist() if a is not None]
    nulls = EMP.column("age").null_count
    assert asc == [(a,) for a in sorted(ages)] + [(None,)] * nulls
    assert desc == [(None,)] * nulls + [(a,) for a in sorted(ages, reverse=True)]


def test_output_names():
    # Unaliased expressions are named as Daft names them: after their first column, "literal"
    # for a constant.
    from sql_oracle import ketch_rows

    names, _ = ketch_rows("SELECT id, salary + 1, name AS n, 7 FROM emp")
    assert names == ["id", "salary", "n", "literal"]


def test_functions_without_sqlite_equivalent():
    got = rows(
        "SELECT concat(name, '-', city) AS c, greatest(age, dept_id) AS g, least(age, dept_id) AS l FROM emp"
    )
    want = []
    for r in EMP.to_pylist():
        c = (r["name"] or "") + "-" + (r["city"] or "")
        vals = [v for v in (r["age"], r["dept_id"]) if v is not None]
        want.append((c, max(vals) if vals else None, min(vals) if vals else None))
    assert sorted_rows(got) == sorted_rows(want)


def test_is_true_and_ilike():
    got = rows("SELECT id FROM emp WHERE (age > 50) IS TRUE AND city ILIKE 'LYON'")
    want = [
        (r["id"],)
        for r in EMP.to_pylist()
        if r["age"] is not None and r["age"] > 50 and (r["city"] or "").lower() == "lyon"
    ]
    assert sorted_rows(got) == sorted_rows(want)


def test_order_by_prefers_output_aliases_over_input_columns():
    check("SELECT id, -age AS age FROM emp ORDER BY age NULLS LAST, id", ordered=True)
    # An unaliased expression is named after its column but ORDER BY that name sorts the input.
    got = rows("SELECT id, -age FROM emp WHERE age IS NOT NULL ORDER BY age, id")
    want = sorted(
        ((r["id"], -r["age"]) for r in EMP.to_pylist() if r["age"] is not None), key=lambda t: (-t[1], t[0])
    )
    assert got == want
