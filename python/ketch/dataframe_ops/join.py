"""DataFrame.join as Daft has it: argument checks with Daft's messages, key expressions, key types
cast to a common supertype when the plan is built, and the cross join.

How keys reach the native join (cpp/ketch/plan/logical, which joins on column names):

- Plain columns of the same name on both sides are one output column (Daft merges them). When
  their types differ (int32 with int64, int64 with float64, a null-typed side), both sides are
  cast in place to the supertype first, so the merged column has that type (semi and anti joins
  output only the left columns, unchanged: their keys go the hidden way below).
- Any other key pair (different names, computed keys such as ``col("a") + 1``, aliases) whose
  types differ, or which is not a plain column, is computed into a hidden column on each side,
  cast to the supertype, joined on, and dropped after the join: the output keeps the columns of
  both inputs unchanged, as in Daft.

Output columns, as Daft's ``infer_join_schema``: the merged keys (in key order), the other left
columns, then the right ones (clashing names prefixed/suffixed); semi/anti: the left columns.

Both runners therefore see join keys of equal types, so the Ray runner hash-partitions both
sides of such a join (a hash exchange) instead of running it on the driver."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ketch.dataframe_ops.supertype import supertype
from ketch.errors import KetchTypeError, KetchValueError
from ketch.expressions.expression import Expression, col

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame

JOIN_TYPES = ("inner", "left", "right", "outer", "anti", "semi", "cross")
JOIN_STRATEGIES = ("hash", "sort_merge", "broadcast")
_HIDDEN_KEY = "__ketch_join_key_{}__"


def check_join_type(how: str) -> None:
    """Raises KetchValueError (a ValueError, as Daft's) for a join type Daft does not have."""
    if how not in JOIN_TYPES:
        raise KetchValueError(
            f"Unsupported join type: {how!r}; supported join types are {', '.join(JOIN_TYPES)}"
        )


def check_strategy(strategy: str | None, how: str) -> None:
    """Daft's checks of ``strategy`` against ``how`` (all ValueErrors)."""
    if strategy is None:
        return
    if how == "cross":
        raise KetchValueError("In a cross join, `strategy` cannot be set")
    if strategy not in JOIN_STRATEGIES:
        raise KetchValueError(
            f"Unsupported join strategy: {strategy!r}; supported strategies are {', '.join(JOIN_STRATEGIES)}"
        )
    if strategy == "sort_merge" and how != "inner":
        raise KetchValueError("Sort merge join only supports inner joins")
    if strategy == "broadcast" and how == "outer":
        raise KetchValueError("Broadcast join does not support outer joins")


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def join_key_type(left: pa.DataType, right: pa.DataType) -> pa.DataType | None:
    """The type two join keys are compared in, or None when they cannot be joined: Daft's
    supertype, except that a string only meets a string (or null): joining text with numbers
    is refused rather than comparing the numbers' text."""
    if left == right:
        return left
    if (_is_string(left) or _is_string(right)) and not (
        pa.types.is_null(left) or pa.types.is_null(right) or (_is_string(left) and _is_string(right))
    ):
        return None
    return supertype(left, right)


def _keys(value: Any) -> list[Expression]:
    """Join keys: a column name, an Expression, or a list / tuple of them."""
    from ketch.dataframe_ops.reshape import column_list

    try:
        return column_list(value)
    except TypeError as error:
        raise KetchTypeError(f"join keys must be column names or Expressions: {error}") from None


def _plain_name(expr: Expression) -> str | None:
    return expr.name() if expr._native.is_column() else None


def _resolve(expr: Expression, schema: pa.Schema) -> pa.DataType:
    return expr._native.resolve_type(schema)


def join(
    left: DataFrame,
    right: DataFrame,
    on: Any,
    left_on: Any,
    right_on: Any,
    how: str,
    strategy: str | None,
    prefix: str | None,
    suffix: str | None,
) -> DataFrame:
    """See DataFrame.join."""
    from ketch.dataframe import DataFrame

    check_join_type(how)
    if prefix is None:
        prefix = "" if suffix else "right."
    suffix = suffix or ""
    if how == "cross":
        if any(side is not None for side in (on, left_on, right_on)):
            raise KetchValueError("In a cross join, `on`, `left_on`, and `right_on` cannot be set")
        check_strategy(strategy, how)
        return DataFrame(left._plan.join(right._plan, [], [], "cross", prefix, suffix, ""))
    if on is None:
        if left_on is None or right_on is None:
            raise KetchValueError("If `on` is None then both `left_on` and `right_on` must not be None")
    else:
        if left_on is not None or right_on is not None:
            raise KetchValueError("If `on` is not None then both `left_on` and `right_on` must be None")
        left_on = right_on = on
    check_strategy(strategy, how)
    lkeys, rkeys = _keys(left_on), _keys(right_on)
    if not lkeys or len(lkeys) != len(rkeys):
        raise KetchValueError(
            "Expected length of left_on to match length of right_on for Join, received: "
            f"{len(lkeys)} vs {len(rkeys)}"
        )
    lschema, rschema = left._plan.schema(), right._plan.schema()
    left_names: list[str] = []
    right_names: list[str] = []
    left_cast: dict[str, Expression] = {}  # same-named plain keys cast in place
    right_cast: dict[str, Expression] = {}
    left_hidden: dict[str, Expression] = {}  # computed / cast keys under a hidden name
    right_hidden: dict[str, Expression] = {}
    right_dropped: list[str] = []  # merged keys whose left column stands for both
    left_dropped: list[str] = []  # merged keys of a right join whose right column stands for both
    merged_keys: list[str] = []  # output first, in key order (Daft's infer_join_schema)
    for i, (lk, rk) in enumerate(zip(lkeys, rkeys, strict=True)):
        lt, rt = _resolve(lk, lschema), _resolve(rk, rschema)
        common = join_key_type(lt, rt)
        if common is None:
            raise KetchTypeError(
                f"cannot join left key {lk!r} of type {lt} with right key {rk!r} of type {rt}: "
                "they have no common type"
            )
        ln, rn = _plain_name(lk), _plain_name(rk)
        merged = ln is not None and ln == rn and how not in ("semi", "anti")
        if merged and ln not in merged_keys:
            merged_keys.append(ln)
        if pa.types.is_null(common):
            # Keys of Arrow's null type never match, and the hash join has no null-typed keys:
            # compare them as int64 (all null). A merged key is all null whichever side a row
            # comes from: the left (null-typed) column stands for both.
            hidden = _HIDDEN_KEY.format(i)
            left_hidden[hidden] = lk.cast(pa.int64())
            right_hidden[hidden] = rk.cast(pa.int64())
            left_names.append(hidden)
            right_names.append(hidden)
            if merged:
                right_dropped.append(rn)
            continue
        if merged and lt != rt and how in ("inner", "left", "right"):
            # Daft keeps the preserved side's key as it is (inner / left: the left's type, right:
            # the right's); the sides are compared in the common type under a hidden name.
            hidden = _HIDDEN_KEY.format(i)
            left_hidden[hidden] = lk.cast(common) if lt != common else lk
            right_hidden[hidden] = rk.cast(common) if rt != common else rk
            left_names.append(hidden)
            right_names.append(hidden)
            (left_dropped if how == "right" else right_dropped).append(ln)
            continue
        if ln is not None and rn is not None and (lt == rt or merged):
            if lt != common:
                left_cast[ln] = col(ln).cast(common)
            if rt != common:
                right_cast[rn] = col(rn).cast(common)
            left_names.append(ln)
            right_names.append(rn)
            continue
        hidden = _HIDDEN_KEY.format(i)
        left_hidden[hidden] = lk if lt == common else lk.cast(common)
        right_hidden[hidden] = rk if rt == common else rk.cast(common)
        left_names.append(hidden)
        right_names.append(hidden)
    if left_cast or left_hidden:
        left = left.with_columns({**left_cast, **left_hidden})
    if right_cast or right_hidden:
        right = right.with_columns({**right_cast, **right_hidden})
    if right_dropped:
        right = right.exclude(*right_dropped)
    if left_dropped:
        left = left.exclude(*left_dropped)
    joined = DataFrame(
        left._plan.join(right._plan, left_names, right_names, how, prefix, suffix, strategy or "")
    )
    names = list(joined._plan.schema().names)
    # Daft's column order: the merged keys, then the other left columns, then the right ones.
    order = merged_keys + [name for name in names if name not in left_hidden and name not in merged_keys]
    if order == names:
        return joined
    return DataFrame(joined._plan.project([col(name)._native for name in order]))
