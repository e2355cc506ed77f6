"""``DataFrame.join_asof``: Daft's point-in-time join. Each left row takes the right row of the
same ``by`` keys whose ``on`` key is the latest at or before its own (``"backward"``), the
earliest at or after (``"forward"``), or the closest (``"nearest"``; a tie prefers the forward
row); rows without one (or with a null key) get nulls, as a left join.

Planned from the engine's own operators, so it runs on both runners: both sides' keys are
stacked into one frame, sorted within each ``by`` group by (key, side), and a window takes for
every left row the last (or first) right row id seen before (after) it
(``last_value(..., ignore_nulls=True)`` over ``rows_between(unbounded_preceding, current_row)``);
two hash joins then bring back the left and right columns. Each side is numbered by
``row_number`` over its (by, on) order (a sort). Output columns: the left ones, then the right
ones but ``on``/``by`` keys named as the left's, clashing names prefixed ``right.`` (or
``prefix``/``suffix``), as in Daft."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ketch.dataframe_ops.supertype import supertype
from ketch.errors import KetchTypeError
from ketch.expressions.expression import Expression, col, lit
from ketch.functions.window import first_value, last_value, row_number
from ketch.window import Window

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame

STRATEGIES = ("backward", "forward", "nearest")
_LID, _RID, _KEY, _RKEY, _SIDE = "__asof_lid", "__asof_rid", "__asof_key", "__asof_rkey", "__asof_side"


def _names(value: Any) -> list[str]:
    from ketch.dataframe import _column_name

    if value is None:
        return []
    items = value if isinstance(value, list | tuple) else [value]
    return [_column_name(v) for v in items]


def _keys(on: Any, left_on: Any, right_on: Any, by: Any, left_by: Any, right_by: Any) -> tuple:
    if on is not None and (left_on is not None or right_on is not None):
        raise ValueError("join_asof: give either `on` or `left_on` and `right_on`, not both")
    if on is None and (left_on is None or right_on is None):
        raise ValueError("join_asof: give `on`, or both `left_on` and `right_on`")
    lk, rk = (_names(on), _names(on)) if on is not None else (_names(left_on), _names(right_on))
    if len(lk) != 1 or len(rk) != 1:
        raise ValueError(f"join_asof: the asof key must be exactly one column, got {lk} and {rk}")
    if by is not None and (left_by is not None or right_by is not None):
        raise ValueError("join_asof: give either `by` or `left_by` and `right_by`, not both")
    if (left_by is None) != (right_by is None):
        raise ValueError("join_asof: `left_by` and `right_by` go together")
    lb, rb = (_names(by), _names(by)) if by is not None else (_names(left_by), _names(right_by))
    if len(lb) != len(rb):
        raise ValueError(f"join_asof: left_by and right_by need the same length, got {lb} and {rb}")
    return lk[0], rk[0], lb, rb


def _common(left: pa.DataType, right: pa.DataType, what: str) -> pa.DataType:
    common = left if left == right else supertype(left, right)
    if common is None:
        raise KetchTypeError(f"join_asof: {what} keys of types {left} and {right} have no common type")
    return common


def join_asof(
    left: DataFrame,
    right: DataFrame,
    *,
    on: Any,
    left_on: Any,
    right_on: Any,
    by: Any,
    left_by: Any,
    right_by: Any,
    strategy: str,
    prefix: str | None,
    suffix: str | None,
) -> DataFrame:
    """See ``DataFrame.join_asof``."""
    if strategy not in STRATEGIES:
        raise ValueError(f"join_asof: strategy must be one of {list(STRATEGIES)}, got {strategy!r}")
    lk, rk, lb, rb = _keys(on, left_on, right_on, by, left_by, right_by)
    left._check_columns([lk, *lb])
    right._check_columns([rk, *rb])
    ls, rs = left._arrow_schema(), right._arrow_schema()
    key_type = _common(ls.field(lk).type, rs.field(rk).type, "asof")
    by_types = [_common(ls.field(a).type, rs.field(b).type, "by") for a, b in zip(lb, rb, strict=True)]
    groups = [f"__asof_by{i}" for i in range(len(lb))]

    def numbered(df: DataFrame, key: str, by_cols: list[str], name: str) -> DataFrame:
        return df.with_column(name, row_number().over(Window().order_by(*by_cols, key)))

    lnum = numbered(left, lk, lb, _LID)
    rnum = numbered(right, rk, rb, _RID)

    def stacked(df: DataFrame, key: str, by_cols: list[str], is_left: bool) -> DataFrame:
        valid = col(key).not_null()
        for b in by_cols:
            valid = valid & col(b).not_null()
        ids = [
            (col(_LID) if is_left else lit(None).cast(pa.uint64())).alias(_LID),
            (lit(None).cast(pa.uint64()) if is_left else col(_RID)).alias(_RID),
        ]
        keyed = col(key).cast(key_type)
        return df.where(valid).select(
            *[col(b).cast(t).alias(g) for b, t, g in zip(by_cols, by_types, groups, strict=True)],
            keyed.alias(_KEY),
            (lit(None).cast(key_type) if is_left else keyed).alias(_RKEY),
            *ids,
            lit(is_left).alias(_SIDE),
        )

    both = stacked(lnum, lk, lb, True).concat(stacked(rnum, rk, rb, False))
    window = Window().partition_by(*groups) if groups else Window()
    # Backward: right rows sort before left rows of the same key (side False < True), so "at or
    # before" includes equal keys; forward: after them (~side), so "at or after" does.
    # Among right rows of equal keys the first (input order, as row_number numbered them) wins,
    # as in Daft: backward looks at them in descending id order.
    back = window.order_by(_KEY, _SIDE, _RID, desc=[False, False, True]).rows_between(
        Window.unbounded_preceding, Window.current_row
    )
    fwd = window.order_by(_KEY, ~col(_SIDE), _RID).rows_between(
        Window.current_row, Window.unbounded_following
    )
    picks: dict[str, Expression] = {}
    if strategy in ("backward", "nearest"):
        picks["__asof_b_rid"] = last_value(col(_RID), ignore_nulls=True).over(back)
        picks["__asof_b_key"] = last_value(col(_RKEY), ignore_nulls=True).over(back)
    if strategy in ("forward", "nearest"):
        picks["__asof_f_rid"] = first_value(col(_RID), ignore_nulls=True).over(fwd)
        picks["__asof_f_key"] = first_value(col(_RKEY), ignore_nulls=True).over(fwd)
    matched = both.with_columns(picks).where(col(_SIDE))
    if strategy == "backward":
        rid = col("__asof_b_rid")
    elif strategy == "forward":
        rid = col("__asof_f_rid")
    else:
        use_fwd = col("__asof_f_rid").not_null() & (
            col("__asof_b_rid").is_null()
            | ((col("__asof_f_key") - col(_KEY)) <= (col(_KEY) - col("__asof_b_key")))
        )
        rid = use_fwd.if_else(col("__asof_f_rid"), col("__asof_b_rid"))
    pairs = matched.select(col(_LID), rid.alias(_RID))
    # Right columns: all but the keys that carry the left's names (Daft drops those).
    same = {rk} if rk == lk else set()
    same |= {b for a, b in zip(lb, rb, strict=True) if a == b}
    right_cols = [c for c in right.column_names if c not in same]
    rside = rnum.select(_RID, *right_cols)
    joined = lnum.join(pairs, on=_LID, how="left").join(
        rside, on=_RID, how="left", prefix=prefix, suffix=suffix
    )
    out = [c for c in joined.column_names if c not in (_LID, _RID)]
    return joined.select(*out)
