"""The public entry points ``sql`` and ``sql_expr``. sqlglot and the translators are imported on
first use, so ``import ketch`` does not pay for them (~0.25 s)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ketch._optional import require
from ketch.dataframe import DataFrame
from ketch.expressions.expression import Expression, col
from ketch.sql.errors import InvalidSQLException

if TYPE_CHECKING:
    from sqlglot import exp


def _is_query(tree: exp.Expression) -> bool:
    from sqlglot import exp

    return isinstance(tree, exp.Select | exp.Union | exp.Intersect | exp.Except | exp.Subquery)


def _format_value(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


_QUOTED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.S)


def _sub_outside_quotes(pattern: str, repl: Callable[[re.Match[str]], str], query: str) -> str:
    """``re.sub`` over the parts of ``query`` outside string literals, quoted identifiers and
    comments (a ``'12:30'`` literal is not a ``:30`` parameter)."""
    out, last = [], 0
    for quoted in _QUOTED.finditer(query):
        out.append(re.sub(pattern, repl, query[last : quoted.start()]))
        out.append(quoted.group(0))
        last = quoted.end()
    out.append(re.sub(pattern, repl, query[last:]))
    return "".join(out)


def _has_outside_quotes(pattern: str, query: str) -> bool:
    return bool(re.search(pattern, _QUOTED.sub(" ", query)))


def _apply_parameters(query: str, params: Sequence[Any] | dict[str, Any]) -> str:
    """Substitutes ``?`` / ``$n`` (a list or tuple) or ``:name`` (a dict) placeholders, as Daft;
    text inside string literals, quoted identifiers and comments is left alone."""
    if not params:
        return query
    if isinstance(params, dict):

        def named(match: re.Match[str]) -> str:
            if match.group(1) not in params:
                raise ValueError(f"Named parameter '{match.group(1)}' not found in parameters")
            return _format_value(params[match.group(1)])

        return _sub_outside_quotes(r"(?<!:):(\w+)", named, query)
    if not isinstance(params, list | tuple):
        raise ValueError(f"Unsupported parameter type: {type(params)}. Expected list, tuple, or dict.")
    styles = [
        _has_outside_quotes(r"\$\d+", query),
        _has_outside_quotes(r"\?", query),
        _has_outside_quotes(r"(?<!:):\w+", query),
    ]
    if sum(styles) > 1:
        raise ValueError(
            "Cannot mix parameter styles. Use only one of: "
            "? (auto-incremented), $n (positional), or :name (named)."
        )
    if styles[0]:

        def positional(match: re.Match[str]) -> str:
            index = int(match.group(1)) - 1
            if not 0 <= index < len(params):
                raise ValueError(f"Positional parameter ${match.group(1)} out of range")
            return _format_value(params[index])

        return _sub_outside_quotes(r"\$(\d+)", positional, query)
    values = iter(params)

    def sequential(_match: re.Match[str]) -> str:
        try:
            return _format_value(next(values))
        except StopIteration:
            raise ValueError("Not enough parameters provided for '?' placeholders") from None

    out = _sub_outside_quotes(r"\?", sequential, query)
    if next(values, _SENTINEL) is not _SENTINEL:
        raise ValueError("Too many parameters provided for '?' placeholders")
    return out


_SENTINEL = object()


def sql(
    sql: str,
    register_globals: bool = True,
    params: Sequence[Any] | dict[str, Any] | None = None,
    **bindings: DataFrame,
) -> DataFrame:
    """Runs a SQL query over DataFrames and returns the result as a (lazy) DataFrame.

    Tables are the keyword ``bindings`` (name → DataFrame) and, with ``register_globals``, every
    DataFrame variable in the caller's globals and locals (bindings win). ``params`` fills
    ``?`` / ``$1`` placeholders (a list or tuple) or ``:name`` ones (a dict).

    Supported: SELECT (expressions, aliases, ``*``, ``t.*``, DISTINCT), FROM tables, table
    functions (``read_parquet(..)``, ``read_csv(..)``, ``read_json(..)``), subqueries
    and CTEs (WITH), WHERE, GROUP BY (columns, expressions, positions, aliases), HAVING, ORDER
    BY (ASC/DESC, NULLS FIRST/LAST, positions, aliases), LIMIT, OFFSET, joins (INNER, LEFT,
    RIGHT, FULL, CROSS, SEMI, ANTI; ON with equality keys plus, for inner joins, any other
    condition; USING), UNION [ALL], INTERSECT [ALL], EXCEPT [ALL], CASE, CAST, IN, BETWEEN,
    IS [NOT] NULL, LIKE / ILIKE, ``x IN (SELECT ..)`` as a WHERE condition (a semi join),
    uncorrelated scalar subqueries in WHERE and in a SELECT list without GROUP BY (a left join
    on a constant key), arithmetic and comparisons, the functions of ``ketch.sql.functions``
    and window functions (OVER). Not supported (refused by name): correlated subqueries, scalar
    subqueries elsewhere, NOT IN (subquery), non-equality conditions in outer joins, NATURAL
    joins, WITH RECURSIVE, GROUPING SETS / ROLLUP / CUBE, FILTER, named windows.

    Raises InvalidSQLException (``ketch.sql.InvalidSQLException``) while building the plan: for
    SQL that does not parse (naming the token, line and column), an unknown table or column, or
    an unsupported construct (naming it)."""
    if params is not None:
        sql = _apply_parameters(sql, params)
    tables: dict[str, DataFrame] = {}
    if register_globals:
        frame = inspect.currentframe()
        caller = frame.f_back if frame is not None else None
        if caller is None:
            raise InvalidSQLException(
                "Cannot get caller environment, please provide CTEs and set `register_globals=False`."
            )
        for name, value in {**caller.f_globals, **caller.f_locals}.items():
            if isinstance(value, DataFrame):
                tables[name] = value
        del frame, caller
    for name, df in bindings.items():
        if not isinstance(df, DataFrame):
            raise TypeError(f"sql(): binding {name!r} must be a DataFrame, got {type(df).__name__}")
        tables[name] = df
    require("sqlglot", "SQL (ketch.sql)")
    from ketch.sql.deep_stack import run_with_deep_stack
    from ketch.sql.parse import parse_sql
    from ketch.sql.translate_query import QueryPlanner

    def plan() -> DataFrame:
        tree = parse_sql(sql)
        if not _is_query(tree):
            kind = tree.key.upper()
            raise InvalidSQLException(f"Unsupported SQL: only queries (SELECT ...) run, got {kind}")
        return QueryPlanner(tables).plan(tree)

    return run_with_deep_stack(plan, "the SQL query")


def _resolve_bare(table: str | None, name: str, node: exp.Column) -> Expression:
    return col(name)


def sql_expr(sql: str) -> Expression:
    """Parses a SQL expression (``"a + b"``, ``"x < 3 AND y LIKE 'a%'"``, ``"sum(x)"``) into an
    Expression over columns named as in the text (qualifiers are dropped; columns are checked
    when the expression is used in a DataFrame).

    Raises InvalidSQLException for text that does not parse (naming the token, line and column),
    a query instead of an expression, or an unsupported construct."""
    require("sqlglot", "SQL expressions (sql_expr, SQL strings in DataFrame methods)")
    from sqlglot import exp

    from ketch.sql.deep_stack import run_with_deep_stack
    from ketch.sql.parse import parse_sql
    from ketch.sql.translate_expr import ExprContext, ExprTranslator

    def translate() -> Expression:
        tree = parse_sql(sql)
        if _is_query(tree) or isinstance(tree, exp.Command):
            raise InvalidSQLException(f"sql_expr() takes an expression, not a statement: {sql!r}")
        ctx = ExprContext(_resolve_bare, "sql_expr", allow_aggregates=True)
        return ExprTranslator(ctx)(tree)

    return run_with_deep_stack(translate, "the SQL expression")
