"""The error SQL planning raises (Daft's ``daft.exceptions.InvalidSQLException``)."""

from __future__ import annotations

from ketch.errors import KetchError


class InvalidSQLException(KetchError, ValueError):
    """SQL that does not parse, names an unknown table or column, or uses a construct Ketch does
    not translate. Raised by ``ketch.sql`` / ``ketch.sql_expr`` while the plan is built (never at
    collect); the message names the offending token (with line and column), table, column or
    construct."""
