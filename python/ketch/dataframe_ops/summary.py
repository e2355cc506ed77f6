"""Daft's ``count``, ``describe`` and ``summarize``: native aggregations; summarize turns its one
aggregated row into one row per column with a native explode."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ketch.dataframe_ops.reshape import column_list, positions
from ketch.datatype import DataType
from ketch.expressions.expression import Expression, col, lit

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame

_INDEX = "__ketch_summary_index"


def count(df: DataFrame, cols: tuple[Any, ...]) -> DataFrame:
    """See ``DataFrame.count``."""
    first = cols[0] if len(cols) == 1 else None
    star = (
        not cols
        or (isinstance(first, str) and first == "*")
        or (isinstance(first, int) and not isinstance(first, bool))
    )
    if star:
        if not df.column_names:
            raise ValueError("count(): the DataFrame has no columns")
        return df.agg(col(df.column_names[0]).count("all").alias("count"))
    if any(isinstance(c, str) and c == "*" for c in cols):
        raise ValueError("Cannot call count() with both * and column names")
    exprs: list[Expression] = []
    for c in cols:
        exprs.extend(column_list(c))
    return df.agg(*[e.count() for e in exprs])


def type_name(dtype: pa.DataType) -> str:
    """How Ketch prints a column type (as in ``show`` and ``repr``)."""
    return repr(DataType(dtype))


def describe(df: DataFrame) -> DataFrame:
    """See ``DataFrame.describe``."""
    from ketch.dataframe import _materialized

    schema = df._arrow_schema()
    table = pa.table(
        {
            "column_name": pa.array(list(schema.names), pa.large_string()),
            "type": pa.array([type_name(t) for t in schema.types], pa.large_string()),
        }
    )
    return _materialized(table)


def _orderable(dtype: pa.DataType) -> bool:
    """Types whose min / max (and distinct count) the engine's aggregations compute."""
    if isinstance(dtype, pa.ExtensionType):
        return False
    t = pa.types
    return (
        t.is_integer(dtype)
        or t.is_floating(dtype)
        or t.is_boolean(dtype)
        or t.is_string(dtype)
        or t.is_large_string(dtype)
        or t.is_date(dtype)
        or t.is_timestamp(dtype)
        or t.is_decimal(dtype)
    )


def _countable(dtype: pa.DataType) -> bool:
    """Types whose distinct values the engine counts: the orderable ones and binary."""
    binary = pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype)
    return _orderable(dtype) or (binary and not isinstance(dtype, pa.ExtensionType))


def summarize(df: DataFrame) -> DataFrame:
    """See ``DataFrame.summarize``."""
    schema = df._arrow_schema()
    if not schema.names:
        raise ValueError("summarize(): the DataFrame has no columns")
    text, u64 = pa.large_string(), pa.uint64()
    aggs: list[Expression] = []
    for i, field in enumerate(schema):
        c = col(field.name)
        if _orderable(field.type):
            aggs.append(c.min().alias(f"__min_{i}"))
            aggs.append(c.max().alias(f"__max_{i}"))
        if _countable(field.type):
            aggs.append(c.approx_count_distinct().alias(f"__distinct_{i}"))
        aggs.append(c.count("valid").alias(f"__count_{i}"))
        aggs.append(c.count("null").alias(f"__nulls_{i}"))
    row = df.agg(*aggs)
    row = row.with_column(_INDEX, positions(len(schema))).explode(_INDEX)
    index = col(_INDEX).cast(pa.int64())

    def pick(prefix: str, dtype: pa.DataType, present: list[bool]) -> Expression:
        slots = [
            col(f"{prefix}_{i}").cast(dtype) if ok else lit(None).cast(dtype) for i, ok in enumerate(present)
        ]
        return slots[0] if len(slots) == 1 else Expression._call("choose", index, *slots)

    ordered = [_orderable(t) for t in schema.types]
    everywhere = [True] * len(schema)
    names = [lit(n).cast(text) for n in schema.names]
    types = [lit(type_name(t)).cast(text) for t in schema.types]
    return row.select(
        (names[0] if len(names) == 1 else Expression._call("choose", index, *names)).alias("column"),
        (types[0] if len(types) == 1 else Expression._call("choose", index, *types)).alias("type"),
        pick("__min", text, ordered).alias("min"),
        pick("__max", text, ordered).alias("max"),
        pick("__count", u64, everywhere).alias("count"),
        pick("__nulls", u64, everywhere).alias("count_nulls"),
        pick("__distinct", u64, [_countable(t) for t in schema.types]).alias("approx_count_distinct"),
    )
