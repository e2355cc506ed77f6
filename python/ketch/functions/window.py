"""Window functions (Daft's ``daft.functions`` window family): ranking, offsets, frame values.

Each returns an expression to apply with ``.over(window)``; outside a window they are invalid.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ketch.expressions import Expression

if TYPE_CHECKING:
    from ketch.window import Window


def row_number() -> Expression:
    """1, 2, 3, ... for the rows of each partition in window order (UInt64). Needs ``order_by``."""
    return Expression._call("row_number")


def rank() -> Expression:
    """Rank with gaps: rows with equal order keys share the rank of the first of them (UInt64).
    Needs ``order_by``."""
    return Expression._call("rank")


def dense_rank() -> Expression:
    """Rank without gaps: 1 + the number of distinct order-key values before the row (UInt64).
    Needs ``order_by``."""
    return Expression._call("dense_rank")


def lag(expr: Expression, offset: int = 1, default: Any | None = None) -> Expression:
    """The value of ``expr`` ``offset`` rows before the current one in its partition (same dtype),
    else ``default`` (a value or an expression; null when None). Raises ValueError for a negative
    offset. Needs ``order_by``."""
    return _offset("lag", expr, offset, default)


def lead(expr: Expression, offset: int = 1, default: Any | None = None) -> Expression:
    """The value of ``expr`` ``offset`` rows after the current one in its partition (same dtype),
    else ``default``. Raises ValueError for a negative offset. Needs ``order_by``."""
    return _offset("lead", expr, offset, default)


def first_value(expr: Expression, ignore_nulls: bool = False) -> Expression:
    """The value of ``expr`` at the first row of the current row's frame (same dtype); with
    ``ignore_nulls``, the frame's first non-null value (null when it has none). The window needs
    ``order_by`` and a frame (``rows_between`` / ``range_between``): ValueError otherwise, as in
    Daft."""
    return Expression._call("first_value", expr, ignore_nulls=bool(ignore_nulls))


def last_value(expr: Expression, ignore_nulls: bool = False) -> Expression:
    """The value of ``expr`` at the last row of the current row's frame (same dtype); with
    ``ignore_nulls``, the frame's last non-null value. The window needs ``order_by`` and a frame:
    ValueError otherwise, as in Daft."""
    return Expression._call("last_value", expr, ignore_nulls=bool(ignore_nulls))


def over(expr: Expression, window: Window) -> Expression:
    """``expr`` (an aggregation such as ``col("x").sum()`` or a window function) computed over
    ``window``: one value per row."""
    return window._apply(expr)


def _offset(function: str, expr: Expression, offset: int, default: Any | None) -> Expression:
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise TypeError(f"{function}(): offset must be an integer, got {offset!r}")
    if offset < 0:
        raise ValueError(f"{function}(): offset must be >= 0, got {offset}")
    if default is None:
        return Expression._call(function, expr, offset=offset)
    return Expression._call(function, expr, default, offset=offset)
