"""SQL text to a sqlglot syntax tree. Parse errors become :class:`InvalidSQLException` naming the
token, line and column."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import ParseError, TokenError

from ketch.sql.errors import InvalidSQLException


class KetchDialect(Postgres):
    """Postgres' dialect: standard SQL, and its null ordering (nulls sort as the largest value:
    last ascending, first descending) is Daft's default, so an ORDER BY key without NULLS
    FIRST/LAST comes out of the parser with Daft's rule already applied. One change, for Daft's
    SQL: ``TO_DATE(s, format)`` takes a strftime format (``'%Y-%m-%d'``), not Postgres' template
    (``'YYYY-MM-DD'``), so it is parsed as a plain call and translated by name."""

    class Parser(Postgres.Parser):
        FUNCTIONS = {name: f for name, f in Postgres.Parser.FUNCTIONS.items() if name != "TO_DATE"}


DIALECT = KetchDialect


def _parse_error(sql: str, error: ParseError) -> InvalidSQLException:
    """Daft's layout: "SQL error at Line: L, Column: C", the line with a caret under the token
    (C: the token's first character, 1-based), then "REASON: ..." (sqlglot's description)."""
    details = error.errors[0] if error.errors else {}
    line, end = details.get("line"), details.get("col")
    token = details.get("highlight") or ""
    description = details.get("description") or str(error)
    if line is None or end is None:
        return InvalidSQLException(f"SQL error: {description}\n  in: {sql}")
    start = max(1, int(end) - len(token) + 1)
    lines = sql.splitlines() or [""]
    text = lines[int(line) - 1] if 0 < int(line) <= len(lines) else ""
    prefix = f"LINE {line}: "
    near = f" (near {token!r})" if token else ""
    return InvalidSQLException(
        f"SQL error at Line: {line}, Column: {start}\n{prefix}{text}\n{' ' * (len(prefix) + start - 1)}^\n"
        f"REASON: {description}{near}"
    )


def parse_sql(sql: str) -> exp.Expression:
    """One SQL statement or expression as a sqlglot tree.

    Raises InvalidSQLException when ``sql`` is not a str, is empty, holds several statements, or
    does not parse (naming the token, line and column)."""
    if not isinstance(sql, str):
        raise InvalidSQLException(f"SQL must be a str, got {type(sql).__name__}")
    try:
        trees = sqlglot.parse(sql, read=DIALECT)
    except ParseError as error:
        raise _parse_error(sql, error) from None
    except TokenError as error:
        raise InvalidSQLException(f"failed to tokenize SQL: {error}\n  in: {sql}") from None
    trees = [t for t in trees if t is not None]
    if not trees:
        raise InvalidSQLException("empty SQL: expected a statement or an expression")
    if len(trees) > 1:
        raise InvalidSQLException(f"expected one SQL statement, got {len(trees)}")
    return trees[0]
