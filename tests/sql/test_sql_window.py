"""ketch.sql window functions (OVER (PARTITION BY .. ORDER BY .. ROWS BETWEEN ..)), compared with
SQLite. The translation targets Daft's window API (ketch.Window, Expression.over, row_number /
rank / dense_rank in ketch.functions, Expression.lag / lead)."""

from __future__ import annotations

import pytest
from sql_oracle import check, frames

import ketch
from ketch.sql import InvalidSQLException

QUERIES = [
    "SELECT id, row_number() OVER (PARTITION BY dept_id ORDER BY salary DESC NULLS LAST, id) AS rn FROM emp",
    "SELECT id, rank() OVER (ORDER BY age NULLS LAST) AS r, dense_rank() OVER (ORDER BY age NULLS LAST) AS d "
    "FROM emp",
    "SELECT id, sum(salary) OVER (PARTITION BY dept_id) AS total FROM emp",
    "SELECT id, count(*) OVER (PARTITION BY city) AS n, max(age) OVER (PARTITION BY city) AS oldest FROM emp",
    "SELECT id, sum(age) OVER (PARTITION BY dept_id ORDER BY id "
    "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s FROM emp",
    "SELECT id, avg(salary) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running "
    "FROM emp",
    "SELECT id, min(age) OVER (PARTITION BY dept_id ORDER BY id "
    "ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS m FROM emp",
    "SELECT id, lag(age, 1) OVER (PARTITION BY dept_id ORDER BY id) AS prev, "
    "lead(age, 2, -1) OVER (PARTITION BY dept_id ORDER BY id) AS next2 FROM emp",
    "SELECT id, salary / sum(salary) OVER (PARTITION BY dept_id) AS share FROM emp WHERE salary IS NOT NULL",
    "SELECT dept_id, sum(age) AS s, rank() OVER (ORDER BY sum(age) DESC NULLS LAST) AS r FROM emp "
    "GROUP BY dept_id",
]


@pytest.mark.parametrize("query", QUERIES)
def test_window_query_matches_sqlite(query):
    check(query)


def test_window_function_in_where_is_refused():
    with pytest.raises(InvalidSQLException, match="not allowed in WHERE"):
        ketch.sql(
            "SELECT id FROM emp WHERE row_number() OVER (ORDER BY id) > 3", register_globals=False, **frames()
        )
