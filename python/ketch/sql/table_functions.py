"""Table functions in FROM: ``read_parquet('path', key => value)``, ``read_csv(..)``,
``read_json(..)`` call Ketch's readers (as Daft's SQL does); arguments are literals."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ketch.dataframe import DataFrame
from ketch.sql.errors import InvalidSQLException
from ketch.sql.functions import MISSING
from ketch.sql.translate_expr import function_args, function_name, literal_value, sql_text


def _readers() -> dict[str, Any]:
    import ketch

    return {"read_parquet": ketch.read_parquet, "read_csv": ketch.read_csv, "read_json": ketch.read_json}


def table_function(node: exp.Func) -> tuple[str, DataFrame]:
    """The name and DataFrame of a table function call. Raises InvalidSQLException for an
    unknown function, an argument that is not a literal, or one the reader does not take."""
    name = function_name(node)
    readers = _readers()
    if name not in readers:
        raise InvalidSQLException(
            f"Unsupported SQL: table function '{name}' in FROM (known: {sorted(readers)})"
        )
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for arg in function_args(node):
        if isinstance(arg, exp.Kwarg | exp.PropertyEQ | exp.EQ):
            key, value = arg.this.name, literal_value(arg.expression)
        else:
            key, value = None, literal_value(arg)
        if value is MISSING:
            raise InvalidSQLException(f"{name}(): arguments must be literals, got '{sql_text(arg)}'")
        if key is None:
            args.append(value)
        else:
            kwargs[key] = value
    try:
        return name, readers[name](*args, **kwargs)
    except TypeError as error:
        raise InvalidSQLException(f"{name}(): {error}") from None
