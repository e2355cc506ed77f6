"""SQL ``LIKE`` / ``ILIKE`` where the expression layer has no ``str.like``: the pattern becomes a
Python regular expression matched row by row (a row-wise Python function; nulls give null)."""

from __future__ import annotations

import re

from ketch.datatype import DataType
from ketch.expressions.expression import Expression
from ketch.sql.errors import InvalidSQLException


def like_regex(pattern: str, case_insensitive: bool) -> re.Pattern[str]:
    """The compiled regex of a SQL LIKE pattern: ``%`` any run of characters, ``_`` one
    character, ``\\`` escapes the next character; the whole value must match."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL | (re.IGNORECASE if case_insensitive else 0))


class _Matcher:
    """A picklable row function (process-mode UDF workers receive it by pickle)."""

    def __init__(self, pattern: str, case_insensitive: bool) -> None:
        self.pattern = pattern
        self.case_insensitive = case_insensitive
        self.regex = like_regex(pattern, case_insensitive)

    def __call__(self, value: str | None) -> bool | None:
        return None if value is None else self.regex.fullmatch(value) is not None


def like(expr: Expression, pattern: object, case_insensitive: bool) -> Expression:
    """Boolean expression: ``expr`` matches the LIKE ``pattern`` (a str literal).
    Raises InvalidSQLException for a pattern that is not a string literal."""
    if not isinstance(pattern, str):
        raise InvalidSQLException(f"LIKE needs a string literal pattern, got {pattern!r}")
    matcher = _Matcher(pattern, case_insensitive)
    return expr.apply(matcher, DataType.bool())
