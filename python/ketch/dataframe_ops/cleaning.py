"""Row cleaning as Daft does it: ``drop_null`` and ``drop_nan`` (one native filter each)."""

from __future__ import annotations

from functools import reduce
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ketch.dataframe_ops.reshape import column_list
from ketch.expressions.expression import Expression, lit

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame


def _targets(df: DataFrame, cols: tuple[Any, ...]) -> list[Expression]:
    if not cols:
        return column_list(df.column_names)
    exprs: list[Expression] = []
    for c in cols:
        exprs.extend(column_list(c))
    return exprs


def drop_null(df: DataFrame, cols: tuple[Any, ...]) -> DataFrame:
    """See ``DataFrame.drop_null``."""
    targets = _targets(df, cols)
    if not targets:
        return df
    any_null = reduce(lambda a, b: a | b, (e.is_null() for e in targets))
    return df.where(~any_null)


def drop_nan(df: DataFrame, cols: tuple[Any, ...]) -> DataFrame:
    """See ``DataFrame.drop_nan``."""
    targets = _targets(df, cols)
    types = df.select(*targets)._arrow_schema().types if targets else []
    floats = [
        e for e, t in zip(targets, types, strict=True) if pa.types.is_float32(t) or pa.types.is_float64(t)
    ]
    if not floats:
        return df

    def known(x: Expression) -> Expression:
        return x.is_null().if_else(lit(False), x)

    # Daft's fold, quirk included: the null -> False step is inside the reduce's function, so with
    # one float column a null row is dropped (~is_nan(null) is null), with several it is kept.
    flags = [Expression._call("is_nan", e) for e in floats]
    return df.where(~reduce(lambda a, b: known(a) | known(b), flags))
