"""Set operations (Daft's ``union*``, ``intersect*``, ``except_*``) and ``ketch.concat``, built from
the engine's projection, concatenation, hash aggregation, filter and explode, so they run natively
on every runner.

Rows compare as SQL's ``IS NOT DISTINCT FROM``: nulls are equal to each other (grouping keeps one
group for them). Duplicates count for the ``*_all`` forms: each distinct row is counted on both
sides by one aggregation, then emitted ``min(l, r)`` times (intersect all) or ``l - r`` times
(except all) through a list of that length that is exploded, as Daft's plans do."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pyarrow as pa

from ketch.dataframe_ops.supertype import supertype
from ketch.errors import KetchValueError
from ketch.expressions.expression import Expression, col, lit

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame

_LEFT = "__ketch_set_left"
_RIGHT = "__ketch_set_right"
_REPEAT = "__ketch_set_repeat"


def _schema_text(df: DataFrame) -> str:
    return "{" + ", ".join(f"{f.name}: {f.type}" for f in df._arrow_schema()) + "}"


def _cast_to(df: DataFrame, names: list[str], types: list[pa.DataType]) -> DataFrame:
    """``df``'s columns, by position, renamed to ``names`` and cast to ``types`` where they differ."""
    exprs = []
    for field, name, dtype in zip(df._arrow_schema(), names, types, strict=True):
        expr = col(field.name)
        if field.type != dtype:
            expr = expr.cast(dtype)
        exprs.append(expr.alias(name))
    return df.select(*exprs)


def union_all(left: DataFrame, right: DataFrame, operation: str = "union") -> DataFrame:
    """The rows of ``left`` then ``right``, matched by position: output names are ``left``'s, each
    column cast to the supertype of both sides' types. Raises KetchValueError when the numbers of
    columns differ or two columns have no common type."""
    ls, rs = left._arrow_schema(), right._arrow_schema()
    if len(ls) != len(rs):
        raise KetchValueError(
            f"{operation}: both DataFrames must have the same number of columns, got "
            f"{len(ls)} {_schema_text(left)} and {len(rs)} {_schema_text(right)}"
        )
    types = []
    for i, (lf, rf) in enumerate(zip(ls, rs, strict=True)):
        common = supertype(lf.type, rf.type)
        if common is None:
            raise KetchValueError(
                f"{operation}: no common supertype for column {lf.name!r} ({lf.type}) and "
                f"{rf.name!r} ({rf.type}) at position {i}"
            )
        types.append(common)
    names = list(ls.names)
    lhs = left if list(ls.types) == types else _cast_to(left, names, types)
    rhs = right if (list(rs.types) == types and rs.names == names) else _cast_to(right, names, types)
    return lhs.concat(rhs)


def union_all_by_name(left: DataFrame, right: DataFrame, operation: str = "union_all_by_name") -> DataFrame:
    """The rows of ``left`` then ``right``, matched by column name: ``left``'s columns then those
    only ``right`` has; a side without a column gives nulls there; a column on both sides is cast
    to the supertype of its two types (KetchValueError when there is none)."""
    ls, rs = left._arrow_schema(), right._arrow_schema()
    names = list(ls.names) + [n for n in rs.names if n not in ls.names]
    types: list[pa.DataType] = []
    for name in names:
        lt = ls.field(name).type if name in ls.names else None
        rt = rs.field(name).type if name in rs.names else None
        if lt is None or rt is None:
            types.append(lt if rt is None else rt)  # type: ignore[arg-type]
            continue
        common = supertype(lt, rt)
        if common is None:
            raise KetchValueError(f"{operation}: no common supertype for column {name!r}: {lt} and {rt}")
        types.append(common)

    def fill(df: DataFrame, schema: pa.Schema) -> DataFrame:
        exprs: list[Expression] = []
        for name, dtype in zip(names, types, strict=True):
            if name not in schema.names:
                exprs.append(lit(None).cast(dtype).alias(name))
            elif schema.field(name).type != dtype:
                exprs.append(col(name).cast(dtype).alias(name))
            else:
                exprs.append(col(name))
        return df.select(*exprs)

    return fill(left, ls).concat(fill(right, rs))


def _check_structurally_equal(left: DataFrame, right: DataFrame, operation: str) -> None:
    """Daft's rule for intersect / except: as many columns, the same type at each position."""
    ls, rs = left._arrow_schema(), right._arrow_schema()
    if len(ls) != len(rs):
        raise KetchValueError(
            f"{operation}: both DataFrames must have the same number of columns, got "
            f"{len(ls)} {_schema_text(left)} and {len(rs)} {_schema_text(right)}"
        )
    for i, (lf, rf) in enumerate(zip(ls, rs, strict=True)):
        if lf.type != rf.type:
            raise KetchValueError(
                f"{operation}: both DataFrames must have the same type at each position; column {i} is "
                f"{lf.name!r} ({lf.type}) on the left and {rf.name!r} ({rf.type}) on the right"
            )


def _counted(left: DataFrame, right: DataFrame, operation: str) -> tuple[DataFrame, list[str]]:
    """One row per distinct row of both sides (by position, ``left``'s names) with the number of
    times it occurs on the left (``_LEFT``) and on the right (``_RIGHT``), both uint64."""
    _check_structurally_equal(left, right, operation)
    names = list(left.column_names)
    true, null = lit(True), lit(None).cast(pa.bool_())
    lhs = left.select(*[col(n) for n in names], true.alias(_LEFT), null.alias(_RIGHT))
    rhs = right.select(
        *[col(r).alias(n) for r, n in zip(right.column_names, names, strict=True)],
        null.alias(_LEFT),
        true.alias(_RIGHT),
    )
    counts = (
        lhs.concat(rhs)
        .groupby(*names)
        .agg(col(_LEFT).count().alias(_LEFT), col(_RIGHT).count().alias(_RIGHT))
    )
    return counts, names


def _repeat(counted: DataFrame, times: Expression, names: list[str]) -> DataFrame:
    """Each row of ``counted`` ``times`` (> 0) times, keeping ``names``: a list of that many
    one-character strings, built natively, is exploded."""
    filler = Expression._call("binary_repeat", lit("x "), times.cast(pa.int64()))
    filler = Expression._call("utf8_split_whitespace", Expression._call("utf8_rtrim_whitespace", filler))
    return counted.select(*names, filler.alias(_REPEAT)).explode(_REPEAT).select(*names)


def intersect(left: DataFrame, right: DataFrame) -> DataFrame:
    """Distinct rows of ``left`` that also occur in ``right``."""
    counted, names = _counted(left, right, "intersect")
    return counted.where((col(_LEFT) > 0) & (col(_RIGHT) > 0)).select(*names)


def intersect_all(left: DataFrame, right: DataFrame) -> DataFrame:
    """Rows occurring in both, each ``min(left count, right count)`` times."""
    counted, names = _counted(left, right, "intersect_all")
    counted = counted.where((col(_LEFT) > 0) & (col(_RIGHT) > 0))
    smaller = (col(_LEFT) > col(_RIGHT)).if_else(col(_RIGHT), col(_LEFT))
    return _repeat(counted, smaller, names)


def except_distinct(left: DataFrame, right: DataFrame) -> DataFrame:
    """Distinct rows of ``left`` that do not occur in ``right``."""
    counted, names = _counted(left, right, "except_distinct")
    return counted.where((col(_LEFT) > 0) & (col(_RIGHT) == 0)).select(*names)


def except_all(left: DataFrame, right: DataFrame) -> DataFrame:
    """Rows of ``left``, each ``left count - right count`` times where that is positive."""
    counted, names = _counted(left, right, "except_all")
    counted = counted.where(col(_LEFT) > col(_RIGHT))
    return _repeat(counted, col(_LEFT).cast(pa.int64()) - col(_RIGHT).cast(pa.int64()), names)


def check_same_schema(left: DataFrame, right: DataFrame) -> None:
    """Daft's rule for concat: exactly the same schema (names and types, in order)."""
    ls, rs = left._arrow_schema(), right._arrow_schema()
    if ls.names != rs.names or ls.types != rs.types:
        raise KetchValueError(
            "DataFrames must have exactly the same schema for concatenation! "
            f"Expected: {_schema_text(left)}, received: {_schema_text(right)}"
        )


def concat(dfs: Iterable[DataFrame]) -> DataFrame:
    """``ketch.concat``: the rows of every DataFrame in order (``DataFrame.concat`` pairwise).
    Raises ValueError for no DataFrames or schemas that differ (KetchValueError), TypeError for an
    item that is not a DataFrame."""
    from ketch.dataframe import DataFrame

    frames = list(dfs)
    if not frames:
        raise ValueError("concat() needs at least one DataFrame")
    for i, df in enumerate(frames):
        if not isinstance(df, DataFrame):
            raise TypeError(f"concat() takes DataFrames, item {i} is a {type(df).__name__}")
    out = frames[0]
    for df in frames[1:]:
        out = out.concat(df)
    return out
