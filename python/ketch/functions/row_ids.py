"""``monotonically_increasing_id()`` (Daft's ``daft.functions.monotonically_increasing_id``).

The expression is a reference to a reserved column; a projection (``select``,
``with_column(s)``) that uses it first puts a MonotonicallyIncreasingId node under itself (a
streaming sink that numbers the rows in stream order, ``cpp/ketch/exec/sinks/sinks.h``), so the
ids are lazy: computed by the query, never at select time. Anywhere else (``where``, ``sort``,
group keys, aggregations) it raises ValueError, as Daft does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ketch.expressions.expression import Expression, col

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["monotonically_increasing_id"]

ID_COLUMN = "__ketch_monotonically_increasing_id"
ONLY_IN_PROJECTIONS = "monotonically_increasing_id() is only allowed in projections"


def monotonically_increasing_id() -> Expression:
    """UInt64: an id per row, unique and increasing in row order (Daft's API).

    On the native runner the ids are consecutive from 0 in stream order over all partitions (as
    Daft's native runner gives them); on the Ray runner the input is gathered on the driver
    first and numbered the same way. Daft's optimizer pushes a later filter beneath the ids (so
    ``with_column("id", monotonically_increasing_id()).where(...)`` numbers only the kept rows);
    Ketch keeps the ids of the rows as they were when the column was made. Usable only in
    projections: elsewhere ValueError."""
    return col(ID_COLUMN).alias("monotonically_increasing_id")


def uses_row_ids(exprs: Iterable[Expression]) -> bool:
    """Whether any of ``exprs`` reads ``monotonically_increasing_id()``."""
    return any(ID_COLUMN in e._native.columns() for e in exprs)


def reject_row_ids(exprs: Iterable[Expression]) -> None:
    """Raises ValueError (Daft's text) when an expression outside a projection uses the ids."""
    if uses_row_ids(exprs):
        raise ValueError(ONLY_IN_PROJECTIONS)
