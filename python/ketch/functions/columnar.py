"""Daft's row-wise reductions across columns (``columns_sum("a", "b", col("c"))``): the columns
gathered into one list per row (``to_list``), then reduced with the list aggregation of the same
kind. Nulls are skipped; a row whose values are all null gives null."""

from __future__ import annotations

from ketch.expressions.expression import Expression, col
from ketch.functions.nested import list_max, list_mean, list_min, list_sum, to_list

__all__ = ["columns_avg", "columns_max", "columns_mean", "columns_min", "columns_sum"]


def _row_list(name: str, exprs: tuple[Expression | str, ...]) -> Expression:
    if not exprs:
        raise ValueError(f"{name} requires at least one expression")
    return to_list(*[col(e) if isinstance(e, str) else e for e in exprs])


def columns_sum(*exprs: Expression | str) -> Expression:
    """Row-wise sum of the columns, named ``columns_sum``. Raises ValueError with no column."""
    return list_sum(_row_list("columns_sum", exprs)).alias("columns_sum")


def columns_mean(*exprs: Expression | str) -> Expression:
    """Row-wise mean (float64) of the columns, named ``columns_mean``."""
    return list_mean(_row_list("columns_mean", exprs)).alias("columns_mean")


def columns_avg(*exprs: Expression | str) -> Expression:
    """Row-wise mean (float64) of the columns, named ``columns_avg``."""
    return list_mean(_row_list("columns_avg", exprs)).alias("columns_avg")


def columns_min(*exprs: Expression | str) -> Expression:
    """Row-wise minimum of the columns, named ``columns_min``."""
    return list_min(_row_list("columns_min", exprs)).alias("columns_min")


def columns_max(*exprs: Expression | str) -> Expression:
    """Row-wise maximum of the columns, named ``columns_max``."""
    return list_max(_row_list("columns_max", exprs)).alias("columns_max")
