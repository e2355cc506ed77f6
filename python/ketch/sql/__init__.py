"""SQL over DataFrames: ``ketch.sql(query, **bindings)`` and ``ketch.sql_expr(text)``, with Daft's
signatures. Queries are parsed by sqlglot and translated into DataFrame / Expression calls, so
they build the same logical plan the DataFrame API does; every error is raised while planning."""

from ketch.sql.api import sql, sql_expr
from ketch.sql.errors import InvalidSQLException

__all__ = ["InvalidSQLException", "sql", "sql_expr"]
