"""ketch.sql: GROUP BY, HAVING and aggregate functions, compared with SQLite (and pandas where
SQLite has no such function)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from sql_oracle import EMP, check, rows, sorted_rows

ORACLE_QUERIES = [
    "SELECT dept_id, count(*) AS n, sum(salary) AS s, avg(age) AS a FROM emp GROUP BY dept_id",
    "SELECT dept_id, min(salary) AS lo, max(salary) AS hi, count(salary) AS c FROM emp GROUP BY dept_id",
    "SELECT count(*) AS n, sum(age) AS s, max(name) AS m FROM emp",
    "SELECT count(DISTINCT city) AS c, count(DISTINCT dept_id) AS d FROM emp",
    "SELECT dept_id, city, count(*) AS n FROM emp GROUP BY dept_id, city",
    "SELECT dept_id, count(*) AS n FROM emp GROUP BY dept_id HAVING count(*) > 10",
    "SELECT dept_id, sum(salary) AS s FROM emp GROUP BY dept_id HAVING avg(age) > 40 AND dept_id IS NOT NULL",
    "SELECT age > 40 AS old, count(*) AS n FROM emp GROUP BY age > 40",
    "SELECT dept_id, sum(salary) / count(salary) AS mean_salary FROM emp GROUP BY dept_id",
    "SELECT dept_id, max(age) - min(age) AS spread FROM emp WHERE salary > 50 GROUP BY dept_id",
    "SELECT dept_id + 1 AS d, count(*) AS n FROM emp GROUP BY dept_id + 1",
    "SELECT city AS c, count(*) AS n FROM emp GROUP BY c",  # GROUP BY an output alias
    "SELECT city, count(*) AS n FROM emp GROUP BY 1",  # and a position
    "SELECT sum(CASE WHEN salary > 100 THEN 1 ELSE 0 END) AS rich, count(*) AS n FROM emp",
    "SELECT dept_id, sum(coalesce(salary, 0)) AS s FROM emp GROUP BY dept_id",
    "SELECT city, count(*) AS n FROM emp GROUP BY city HAVING n > 12",  # an alias in HAVING
    "SELECT count(1) AS c, count(*) AS n, sum(age) AS s FROM emp WHERE id > 1000",  # no rows
    "SELECT city, count(*) AS n FROM emp WHERE id > 1000 GROUP BY city",
]


@pytest.mark.parametrize("query", ORACLE_QUERIES)
def test_aggregate_matches_sqlite(query):
    check(query)


def test_group_by_with_order_and_limit():
    check(
        "SELECT dept_id, count(*) AS n FROM emp GROUP BY dept_id ORDER BY n DESC, dept_id NULLS LAST LIMIT 3",
        ordered=True,
    )
    check("SELECT city, sum(age) FROM emp GROUP BY city ORDER BY sum(age) DESC NULLS LAST", ordered=True)


def test_stddev_and_any_value_match_pandas():
    got = rows("SELECT dept_id, stddev(salary) AS sd FROM emp GROUP BY dept_id")
    frame = EMP.to_pandas()
    want = [
        (None if pd.isna(k) else int(k), None if math.isnan(v) else v)
        for k, v in frame.groupby("dept_id", dropna=False)["salary"].std(ddof=1).items()
    ]
    assert sorted_rows(got) == sorted_rows(want)
    got = rows("SELECT dept_id, any_value(dept_id) AS same FROM emp GROUP BY dept_id")
    assert all(k == v for k, v in got)


def test_count_star_output_name_and_unaliased_aggregates():
    from sql_oracle import ketch_rows

    names, values = ketch_rows("SELECT count(*), sum(age) FROM emp")
    assert names == ["count", "age"]
    assert values == [(EMP.num_rows, sum(a for a in EMP.column("age").to_pylist() if a is not None))]
