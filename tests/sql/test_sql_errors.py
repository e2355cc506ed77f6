"""ketch.sql / sql_expr errors: InvalidSQLException (Daft's class) naming the token and position,
the unknown table or column, or the unsupported construct; raised while the plan is built."""

from __future__ import annotations

import pytest
from sql_oracle import frames

import ketch
from ketch.sql import InvalidSQLException


def plan(query: str) -> ketch.DataFrame:
    return ketch.sql(query, register_globals=False, **frames())


def test_parse_error_names_token_line_and_column():
    # Daft's layout: the position, the line with a caret under the token, the reason
    with pytest.raises(InvalidSQLException, match=r"SQL error at Line: 2, Column: 12\n") as info:
        plan("SELECT id FROM emp\nWHERE id = = 1")
    assert "LINE 2: WHERE id = = 1\n" + " " * (len("LINE 2: ") + 11) + "^\nREASON: " in str(info.value)
    assert "(near '=')" in str(info.value)
    with pytest.raises(InvalidSQLException, match=r"(?s)Line: 1, Column: \d+.*REASON: Expecting \)"):
        plan("SELECT id FROM emp WHERE (id = 1")
    with pytest.raises(InvalidSQLException, match="SQL error at Line: 1"):
        ketch.sql_expr("a + (b")


def test_unknown_table_and_columns_are_named():
    with pytest.raises(
        InvalidSQLException, match=r"Table not found: 'nope'.*known tables: \['dept', 'emp', 'other'\]"
    ):
        plan("SELECT * FROM nope")
    with pytest.raises(
        InvalidSQLException, match=r"Column salry not found; available columns: .*'emp.salary'"
    ):
        plan("SELECT salry FROM emp")
    with pytest.raises(InvalidSQLException, match=r"Column e.nope not found"):
        plan("SELECT e.nope FROM emp e")
    with pytest.raises(InvalidSQLException, match=r"no table or alias 'x' in FROM"):
        plan("SELECT x.id FROM emp e")
    with pytest.raises(InvalidSQLException, match=r"Column bad not found"):
        plan("SELECT id FROM emp WHERE bad > 1")
    with pytest.raises(InvalidSQLException, match=r"Column e.zz not found"):
        plan("SELECT e.id FROM emp e JOIN dept d ON e.zz = d.dept_id")


def test_ambiguous_and_grouping_errors():
    with pytest.raises(InvalidSQLException, match=r"'dept_id' is ambiguous"):
        plan("SELECT dept_id FROM emp e JOIN dept d ON e.dept_id = d.dept_id + 0")
    with pytest.raises(InvalidSQLException, match=r"column 'name' must appear in the GROUP BY clause"):
        plan("SELECT dept_id, name FROM emp GROUP BY dept_id")
    with pytest.raises(InvalidSQLException, match=r"aggregate function 'SUM\(age\)' is not allowed in WHERE"):
        plan("SELECT id FROM emp WHERE sum(age) > 3")
    with pytest.raises(InvalidSQLException, match=r"cannot be nested"):
        plan("SELECT sum(max(age)) FROM emp")
    with pytest.raises(InvalidSQLException, match=r"duplicate output column names \['id'\]"):
        plan("SELECT e.id, d.dept_id AS id FROM emp e JOIN dept d ON e.dept_id = d.dept_id")
    with pytest.raises(InvalidSQLException, match=r"column 'emp.id' must appear in the GROUP BY clause"):
        plan("SELECT * FROM emp GROUP BY city")
    with pytest.raises(InvalidSQLException, match=r"\(Filter is not supported\)"):
        plan("SELECT sum(age) FILTER (WHERE id > 1) FROM emp")
    with pytest.raises(InvalidSQLException, match="ORDER BY position 5"):
        plan("SELECT id FROM emp ORDER BY 5")


@pytest.mark.parametrize(
    "query,construct",
    [
        ("SELECT id FROM emp WHERE id > 3 OR id IN (SELECT id FROM other)", "IN \\(subquery\\) other than"),
        (
            "SELECT id FROM emp e WHERE age > (SELECT max(o.id) FROM other o WHERE o.id <> e.id)",
            "the correlated condition 'o.id <> e.id'",
        ),
        (
            "SELECT dept_id, count(*) FROM emp GROUP BY dept_id ORDER BY (SELECT 1)",
            "a subquery here",
        ),
        ("SELECT id FROM emp WHERE age > (SELECT id, age FROM emp)", "must return one column, got 2"),
        ("SELECT id FROM emp e LEFT JOIN dept d ON e.dept_id > d.dept_id", "in the ON clause of a left join"),
        ("WITH RECURSIVE r AS (SELECT 1 AS x) SELECT x FROM r", "WITH RECURSIVE"),
        ("SELECT id FROM emp NATURAL JOIN dept", "NATURAL JOIN"),
        ("SELECT frobnicate(id) FROM emp", "unknown function 'frobnicate'"),
        ("SELECT TRY_CAST(id AS INT) FROM emp", "TRY_CAST"),
        ("SELECT CAST(id AS INTERVAL) FROM emp", "type 'INTERVAL' in CAST"),
        ("INSERT INTO emp VALUES (1)", "only queries"),
        ("SELECT dept_id FROM emp GROUP BY CUBE (dept_id)", "CUBE"),
    ],
)
def test_unsupported_constructs_are_named(query, construct):
    with pytest.raises(InvalidSQLException, match=construct):
        plan(query)


def test_errors_come_at_plan_time_not_collect():
    # The SQL call itself raises; nothing was collected (a lazy DataFrame is never returned).
    with pytest.raises(InvalidSQLException):
        plan("SELECT nope FROM emp")
    df = plan("SELECT id FROM emp")
    assert df._result is None  # lazy: planning ran no query


def test_invalid_sql_exception_is_a_ketch_value_error():
    from ketch.errors import KetchError

    assert issubclass(InvalidSQLException, KetchError)
    assert issubclass(InvalidSQLException, ValueError)


def test_function_arity_and_literal_arguments():
    with pytest.raises(InvalidSQLException, match=r"function mean\(\) takes 1 argument"):
        plan("SELECT mean(age, 2) FROM emp")
    with pytest.raises(InvalidSQLException, match="LIMIT must be an integer literal"):
        plan("SELECT id FROM emp LIMIT id")
    with pytest.raises(InvalidSQLException, match="needs an OVER clause"):
        plan("SELECT row_number() FROM emp")


def test_join_key_type_mismatch_names_the_sql_keys():
    from ketch.errors import KetchTypeError

    with pytest.raises(KetchTypeError, match=r"cannot join on e.name = d.dept_id: .*'e.name' of type string"):
        plan("SELECT e.id FROM emp e JOIN dept d ON e.name = d.dept_id")
