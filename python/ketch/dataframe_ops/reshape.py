"""Wide-to-long reshaping (Daft's ``unpivot`` / ``melt``) and ``explode`` with Daft's options,
built from native projection and explode: the input is read once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from ketch.dataframe_ops.supertype import supertype
from ketch.errors import KetchSchemaError, KetchTypeError, KetchValueError
from ketch.expressions.expression import Expression, col, lit

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame

_INDEX = "__ketch_unpivot_index"


def column_list(columns: Any) -> list[Expression]:
    """Daft's ManyColumnsInputType: a name, an Expression, or a list / tuple of them."""
    items = list(columns) if isinstance(columns, list | tuple) else [columns]
    out = []
    for item in items:
        if isinstance(item, str):
            out.append(col(item))
        elif isinstance(item, Expression):
            out.append(item)
        else:
            raise TypeError(f"expected a column name or an Expression, got {type(item).__name__}")
    return out


def positions(count: int) -> Expression:
    """A list literal ``["0", "1", ..., str(count - 1)]`` (broadcast to every row): exploding it
    repeats each row ``count`` times; ``cast(int64)`` of the element gives the position."""
    return Expression._call("utf8_split_whitespace", lit(" ".join(str(i) for i in range(count))))


def unpivot(
    df: DataFrame, ids: Any, values: Any, variable_name: str, value_name: str, operation: str = "unpivot"
) -> DataFrame:
    """See ``DataFrame.unpivot``."""
    id_exprs = column_list(ids) if ids is not None else []
    id_names = [e.name() for e in id_exprs]
    value_exprs = column_list(values) if values is not None else []
    if not value_exprs:
        value_exprs = [col(n) for n in df.column_names if n not in id_names]
    if not value_exprs:
        raise KetchValueError(f"{operation}: requires at least one value column (ids: {id_names})")
    for name in (variable_name, value_name):
        if not isinstance(name, str) or not name:
            raise ValueError(f"{operation}: variable_name and value_name must be non-empty strings")
    if variable_name == value_name or {variable_name, value_name} & set(id_names):
        raise KetchValueError(
            f"{operation}: output columns must have distinct names, got ids {id_names}, "
            f"variable_name {variable_name!r}, value_name {value_name!r}"
        )
    # Resolve the value columns' types (and missing columns) against the input.
    probe = df.select(*value_exprs)
    fields = list(probe._arrow_schema())
    common = fields[0].type
    for field in fields[1:]:
        merged = supertype(common, field.type)
        if merged is None:
            raise KetchTypeError(
                f"{operation}: could not determine the supertype of the value columns: "
                f"{field.name!r} is {field.type}, the columns before it {common}"
            )
        common = merged
    names = [f.name for f in fields]
    cast = [e if f.type == common else e.cast(common) for e, f in zip(value_exprs, fields, strict=True)]
    # One pass: each row repeats once per value column, then picks that column's value.
    index = col(_INDEX).cast(pa.int64())
    wide = df.select(*id_exprs, *[c.alias(f"__ketch_unpivot_{i}") for i, c in enumerate(cast)])
    wide = wide.with_column(_INDEX, positions(len(cast))).explode(_INDEX)
    slots = [col(f"__ketch_unpivot_{i}") for i in range(len(cast))]
    variable = Expression._call("choose", index, *[lit(n) for n in names])
    value = Expression._call("choose", index, *slots) if len(slots) > 1 else slots[0]
    return wide.select(*id_names, variable.alias(variable_name), value.alias(value_name))


def explode(
    df: DataFrame, columns: tuple[Any, ...], index_column: str | None, ignore_empty_and_null: bool
) -> DataFrame:
    """See ``DataFrame.explode``."""
    from ketch.dataframe import _column_name

    names = [_column_name(c) for c in columns]
    if not names:
        raise ValueError("explode() needs at least one column")
    df._check_columns(names)
    for name in names:
        dtype = df._arrow_schema().field(name).type
        if not (
            pa.types.is_list(dtype) or pa.types.is_large_list(dtype) or pa.types.is_fixed_size_list(dtype)
        ):
            raise KetchSchemaError(f"explode(): column {name!r} is {dtype}, not a list")
    if index_column is not None:
        if not isinstance(index_column, str):
            index_column = _column_name(index_column)
        if index_column in df.column_names:
            raise KetchValueError(
                f"explode(): index_column {index_column!r} already exists; columns: {df.column_names}"
            )
    if ignore_empty_and_null:
        df = df.where(Expression._call("list_value_length", col(names[0])) > 0)
    if index_column is None:
        from ketch.dataframe import DataFrame

        return DataFrame(df._plan.explode(names))
    return _explode_with_index(df, names, index_column)


def _explode_with_index(df: DataFrame, names: list[str], index_column: str) -> DataFrame:
    """Adds, next to the first exploded column, a list ``[0, 1, ..., len - 1]`` per row (null for a
    null list) computed per batch in Python (numpy), and explodes it with the others: each element
    gets its position (uint64); a null or empty list's one row gets a null position, as Daft's."""
    from ketch.dataframe import DataFrame
    from ketch.datatype import DataType
    from ketch.udf.options import _Options
    from ketch.udf.plan_node import _udf_expression
    from ketch.udf.runners import _BatchFunctionRunner

    dtype = DataType(pa.large_list(pa.uint64()))

    def positions_of(lists: Any) -> pa.Array:
        import numpy as np

        array = lists.to_arrow()
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        lengths = pa.compute.list_value_length(array).fill_null(0).to_numpy(zero_copy_only=False)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        starts = np.repeat(offsets[:-1], lengths)
        values = np.arange(offsets[-1], dtype=np.uint64) - starts.astype(np.uint64)
        return pa.LargeListArray.from_arrays(
            pa.array(offsets), pa.array(values, pa.uint64()), mask=array.is_null()
        )

    runner = _BatchFunctionRunner("explode_index", dtype, positions_of)
    index = _udf_expression(runner, (col(names[0]),), _Options(dtype), False)
    with_index = df.with_column(index_column, index)
    return DataFrame(with_index._plan.explode([*names, index_column]))
