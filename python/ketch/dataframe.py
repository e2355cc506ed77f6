"""The lazy DataFrame. Each method returns a new DataFrame over a new native logical plan;
``collect`` (and everything that needs data) optimizes the plan and runs it on the native executor."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any, overload

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from ketch import _core
from ketch.context import get_execution_config
from ketch.dataframe_ops.aggregations import GlobalAggregationShorthands, GroupedAggregationShorthands
from ketch.dataframe_ops.conveniences import DataFrameConveniences
from ketch.dataframe_ops.training_data import TrainingDataMethods
from ketch.datatype import DataType
from ketch.errors import ColumnNotFoundError, KetchError, KetchNotImplementedError, KetchTypeError
from ketch.expressions import wildcard
from ketch.expressions.expression import Expression, col, lit
from ketch.series import to_pylist

if TYPE_CHECKING:
    from ketch.schema import Schema


def _as_expression(column: str | Expression) -> Expression:
    if isinstance(column, Expression):
        return column
    if isinstance(column, str):
        return col(column)
    raise TypeError(f"expected a column name or an Expression, got {type(column).__name__}")


class DataFrame(GlobalAggregationShorthands, DataFrameConveniences, TrainingDataMethods):
    """A lazy table. Operations build a logical plan; nothing runs until ``collect``, ``show``,
    ``to_*``, ``count_rows`` or ``write_parquet``."""

    def __init__(self, plan: _core.PyPlan) -> None:
        plan.check_depth()  # KetchValueError past the engine's plan depth limit
        self._plan = plan
        self._result: pa.Table | None = None
        self._partition_rows: list[int] | None = None  # rows per partition of the materialized result

    def _materialize(self, table: pa.Table, partition_rows: list[int]) -> None:
        """Keeps a query's result, with its partitions; later operations start from it."""
        self._result = table
        self._partition_rows = partition_rows
        self._plan = _core.PyPlan.in_memory(table, partition_rows)

    # -- schema ----------------------------------------------------------------------------------------
    def schema(self) -> Schema:
        """Column names and types as a :class:`ketch.Schema` (Daft's): ``schema()["x"].dtype``,
        ``column_names()``, ``to_pyarrow_schema()`` (image columns keep Ketch's extension types)."""
        from ketch.schema import Schema

        return Schema(self._plan.schema())

    def _arrow_schema(self) -> pa.Schema:
        """The Arrow schema of the plan's output (what internal code works with)."""
        return self._plan.schema()

    @property
    def column_names(self) -> list[str]:
        return list(self._arrow_schema().names)

    def _check_columns(self, names: tuple[str, ...] | list[str]) -> None:
        missing = [n for n in names if n not in self.column_names]
        if missing:
            raise ColumnNotFoundError(f"columns {missing} not found; available columns: {self.column_names}")

    @overload
    def __getitem__(self, name: str | int) -> Expression: ...

    @overload
    def __getitem__(self, name: slice | list[str | int] | tuple[str | int, ...]) -> DataFrame: ...

    def __getitem__(self, name: Any) -> Expression | DataFrame:
        """``df["x"]``: the column ``x``; ``df[i]``: the column at position ``i`` (negative from
        the end); ``df["*"]``: every column (the wildcard). ``df[1:3]`` (positions) and
        ``df[["a", 2]]`` (names and positions) give a DataFrame of those columns, as Daft.
        Raises ColumnNotFoundError for a missing name, IndexError for a position out of range."""
        if isinstance(name, slice):
            return self.select(*self.column_names[name])
        if isinstance(name, (list, tuple)):
            return self.select(*[self[item] for item in name])
        if isinstance(name, int) and not isinstance(name, bool):
            names = self.column_names
            if not -len(names) <= name < len(names):
                raise IndexError(f"column position {name} out of range for {len(names)} columns")
            return col(names[name])
        if name == wildcard.WILDCARD:
            return col(name)
        self._check_columns([name])
        return col(name)

    # -- relational operations -------------------------------------------------------------------------
    def select(self, *columns: str | Expression, **projections: Expression) -> DataFrame:
        """Keeps / computes exactly these columns, in this order; keyword arguments add
        expressions under their keyword as name, after the positional ones (Daft's
        ``select(*columns, **projections)``). A select of aggregations (``select(col("a").sum())``)
        is a global aggregation, ``agg``'s. Raises ValueError when no column is given."""
        if not columns and not projections:
            raise ValueError("select() needs at least one column")
        exprs = [x for c in columns for x in self._expand_unnest(_as_expression(c))]
        exprs += [_as_expression(e).alias(name) for name, e in projections.items()]
        exprs = wildcard.expand(exprs, self.column_names)
        if any(e._native.has_aggregation() for e in exprs):
            return self.agg(*exprs)
        return DataFrame(
            self._projection_input(exprs).project([e._native for e in exprs])
        )._explode_generators(exprs)

    def _projection_input(self, exprs: list[Expression]) -> Any:
        """The plan a projection of ``exprs`` reads: this one, or this one with the
        ``monotonically_increasing_id()`` column appended when an expression uses it."""
        from ketch.functions import row_ids

        if not row_ids.uses_row_ids(exprs):
            return self._plan
        return self._plan.monotonic_id(row_ids.ID_COLUMN)

    def _expand_unnest(self, expr: Expression) -> list[Expression]:
        """``unnest(s)``: one ``s.struct.get(field)`` per field of the struct ``s``, else ``[expr]``."""
        from ketch.functions.nested import unnest_source

        source = unnest_source(expr)
        if source is None:
            return [expr]
        struct_type = source._native.resolve_type(self._arrow_schema())
        if not pa.types.is_struct(struct_type):
            raise KetchTypeError(f"unnest expects a struct, but {source!r} has type {struct_type}")
        return [source.struct.get(field.name) for field in struct_type]

    def with_column(self, column_name: str, expr: Expression) -> DataFrame:
        """Adds (or replaces, in place) the column ``column_name`` computed by ``expr``."""
        return self.with_columns({column_name: expr})

    def with_columns(self, columns: dict[str, Expression]) -> DataFrame:
        """Adds or replaces several columns at once."""
        exprs: list[Any] = []
        pending = dict(columns)
        for name in self.column_names:
            exprs.append(_as_expression(pending.pop(name)).alias(name) if name in pending else col(name))
        exprs.extend(_as_expression(e).alias(n) for n, e in pending.items())
        return DataFrame(
            self._projection_input(exprs).project([e._native for e in exprs])
        )._explode_generators(exprs)

    def _explode_generators(self, exprs: list[Expression]) -> DataFrame:
        """Generator UDF columns hold one list per input row: each becomes one row per yielded
        value; a row whose generator yielded nothing gives one row with null there (Daft's rule)."""
        names = [e.name() for e in exprs if e._explode]
        if not names:
            return self
        # A row's list is null when its generator yielded nothing: explode keeps one null row.
        return self.explode(*names)

    def where(self, predicate: Expression | str) -> DataFrame:
        """Keeps the rows where ``predicate`` (a Boolean expression, or a SQL predicate string such
        as ``"x < 3 AND y IS NOT NULL"`` parsed by ``ketch.sql_expr``) is true; null counts as
        false. A SQL string that does not parse raises ketch.sql.InvalidSQLException."""
        if isinstance(predicate, str):
            from ketch.sql import sql_expr

            predicate = sql_expr(predicate)
        from ketch.functions.row_ids import reject_row_ids

        reject_row_ids([_as_expression(predicate)])
        return DataFrame(self._plan.filter(_as_expression(predicate)._native))

    filter = where

    def exclude(self, *names: str) -> DataFrame:
        """Drops the named columns."""
        self._check_columns(names)
        kept = [col(n)._native for n in self.column_names if n not in names]
        if not kept:
            raise ValueError("exclude() would drop every column")
        return DataFrame(self._plan.project(kept))

    def limit(self, num: int) -> DataFrame:
        """The first ``num`` rows (in source order). ``num`` larger than the number of rows keeps
        them all. Raises ValueError unless ``num`` is an int >= 0."""
        if not isinstance(num, int) or isinstance(num, bool) or num < 0:
            raise ValueError(f"limit() takes an int >= 0, got {num!r}")
        return DataFrame(self._plan.limit(min(num, 2**63 - 1)))

    def offset(self, num: int) -> DataFrame:
        """Skips the first ``num`` rows (in the order of the plan below: source order, or the sort
        order after ``sort``); ``df.offset(m).limit(n)`` is rows m to m + n - 1, as SQL's
        ``LIMIT n OFFSET m``. ``num`` larger than the number of rows leaves none. Over a sort, a
        limit and its offset run as one top-N (``explain`` shows ``TopN``).
        Raises ValueError unless ``num`` is an int >= 0."""
        if not isinstance(num, int) or isinstance(num, bool) or num < 0:
            raise ValueError(f"offset() takes an int >= 0, got {num!r}")
        return DataFrame(self._plan.limit(2**63 - 1, min(num, 2**63 - 1)))

    def sort(
        self,
        by: str | Expression | list[str | Expression],
        desc: bool | list[bool] = False,
        nulls_first: bool | list[bool] | None = None,
    ) -> DataFrame:
        """Sorts by one or more keys: column names or expressions (``col("a") + col("b")``,
        computed into hidden columns and dropped after). ``desc`` and ``nulls_first`` take one value
        or one per key; by default nulls go last ascending and first descending (Daft's rule).
        Stable. Raises ValueError for no key or flag lists of the wrong length."""
        keys = by if isinstance(by, list) else [by]
        if not keys:
            raise ValueError("sort() needs at least one key")
        descending = desc if isinstance(desc, list) else [desc] * len(keys)
        if nulls_first is None:
            nulls = list(descending)
        else:
            nulls = nulls_first if isinstance(nulls_first, list) else [nulls_first] * len(keys)
        if len(descending) != len(keys) or len(nulls) != len(keys):
            raise ValueError("sort(): desc and nulls_first need one value per key")
        from ketch.dataframe_ops import sort

        exprs = [_as_expression(k) for k in keys]
        from ketch.functions.row_ids import reject_row_ids

        reject_row_ids(exprs)
        return sort.sort(self, exprs, [bool(d) for d in descending], [bool(n) for n in nulls])

    def groupby(self, *group_by: str | Expression | list[str | Expression]) -> GroupedDataFrame:
        """Groups rows by the given keys (column names, expressions such as ``col("a") % 2`` or
        ``col("g").alias("x")``, or lists of them); follow with ``.agg(...)`` or ``.sum(...)``
        etc. Each key's output column is named by its output name (``a``, ``x``). Raises
        ColumnNotFoundError for a key naming a missing column."""
        keys = [_as_expression(k) for k in _flatten(group_by)]
        from ketch.functions.row_ids import reject_row_ids

        reject_row_ids(keys)
        self._check_columns([k for k in _flatten(group_by) if isinstance(k, str)])
        return GroupedDataFrame(self, keys)

    def agg(self, *to_agg: Expression | list[Expression]) -> DataFrame:
        """Aggregates the whole table into one row: ``df.agg(col("x").sum(), col("y").mean())``.
        An entry may be any expression over aggregations and literals (``col("a").sum() + 1``,
        ``col("a").mean() / col("b").mean()``), named by its output name. Raises ValueError for an
        entry reading a column outside any aggregation, or an aggregation nested in another."""
        exprs = wildcard.expand(_flatten(to_agg), self.column_names)
        from ketch.dataframe_ops.grouped_udfs import lower_udafs
        from ketch.functions.row_ids import reject_row_ids

        reject_row_ids(exprs)
        lowered = lower_udafs(self, [], [], exprs)
        if lowered is not None:
            return lowered
        return DataFrame(self._plan.aggregate_expressions([], [e._native for e in exprs]))

    def pivot(
        self,
        group_by: str | Expression | list[str | Expression],
        pivot_col: str | Expression,
        value_col: str | Expression,
        agg_fn: str,
        names: list[str] | None = None,
    ) -> DataFrame:
        """Turns the distinct values of ``pivot_col`` into columns (Daft's ``pivot``): one row per
        ``group_by`` key, one column per pivot value, holding ``agg_fn`` (any aggregation ``agg``
        takes, by its Daft name: "sum", "mean"/"avg", "min", "max", "count", "count_distinct",
        "product", "stddev", "var", "skew", "median", "bool_and", "bool_or", "any_value",
        "list"/"agg_list"/"list_agg", "set"/"agg_set"/"list_agg_distinct", "concat"/"agg_concat"/
        "string_agg", "approx_count_distinct") of ``value_col`` over that key's rows with that pivot
        value (null where there are none). Rows whose pivot value is null make the column "None"
        (as Daft names it), placed after the other values.

        ``names`` fixes the pivot values, in output order (values not named are dropped): strings
        match the values' string form (as Ketch casts them: ``True`` → "true", ``1.0`` → "1.0"),
        other values are converted that way. Without
        it the distinct non-null values are computed first (one extra pass over the input), sorted,
        and rendered as strings. Runs as two hash aggregations: by (key, pivot value), then by key over
        that small result.
        Raises ValueError for an unknown ``agg_fn``."""
        from ketch.dataframe_ops.aggregations import pivot_aggregation, pivot_kinds

        if agg_fn not in pivot_kinds():
            raise ValueError(f"pivot(): agg_fn must be one of {sorted(pivot_kinds())}, got {agg_fn!r}")
        keys = [_column_name(g) for g in (group_by if isinstance(group_by, list) else [group_by])]
        pivot_name, value_name = _column_name(pivot_col), _column_name(value_col)
        schema = self._arrow_schema()
        # Pivot values are matched by their string form (Ketch's cast), as the names are.
        pivot_key = col(pivot_name)
        if not pa.types.is_string(schema.field(pivot_name).type):
            pivot_key = pivot_key.cast(pa.string())
        pivot_key = Expression._call("coalesce", pivot_key, lit("None"))  # null pivot values: "None"
        if names is None:
            distinct = self.select(pivot_name).distinct().to_arrow().column(0)
            found = distinct.drop_null()
            found = found.take(pa.compute.sort_indices(found))
            names = _as_text(found)
            if distinct.null_count and "None" not in names:
                names.append("None")
        else:
            # Non-string names are values of the pivot column: named by their string form.
            pivot_type = schema.field(pivot_name).type
            names = [n if isinstance(n, str) else _as_text(pa.array([n], pivot_type))[0] for n in names]
            if len(set(names)) != len(names):
                raise ValueError(f"pivot(): names must be distinct, got {names}")
        # Aggregate per (key, pivot value) first; the small result is then spread into columns,
        # each taking the one value its (key, pivot value) group produced.
        agg_value = pivot_aggregation(agg_fn, col(value_name))
        grouped = self.with_column("__pivot_key", pivot_key).groupby(*keys, "__pivot_key")
        grouped_df = grouped.agg(agg_value.alias("__pivot_value"))
        value_type = grouped_df._arrow_schema().field("__pivot_value").type
        parts: dict[str, Expression] = {}
        aggs = []
        for i, name in enumerate(names):
            part = f"__pivot_{i}"
            matched = col("__pivot_key") == lit(str(name))
            parts[part] = matched.if_else(col("__pivot_value"), lit(None).cast(value_type))
            aggs.append(col(part).any_value(ignore_nulls=True).alias(str(name)))
        if not aggs:
            return self.select(*keys).distinct()
        return grouped_df.with_columns(parts).groupby(*keys).agg(*aggs)

    def distinct(self, *on: str | Expression) -> DataFrame:
        """Unique rows (over all columns, or over ``on`` keeping one value of the other columns).
        Output order is not defined."""
        keys = [_column_name(c) for c in on] or self.column_names
        others = [col(n).any_value().alias(n) for n in self.column_names if n not in keys]
        return DataFrame(self._plan.aggregate(keys, [e._native for e in others])).select(*self.column_names)

    unique = distinct

    def join_asof(
        self,
        other: DataFrame,
        *,
        on: str | Expression | None = None,
        left_on: str | Expression | None = None,
        right_on: str | Expression | None = None,
        by: str | Expression | list[str | Expression] | None = None,
        left_by: str | Expression | list[str | Expression] | None = None,
        right_by: str | Expression | list[str | Expression] | None = None,
        strategy: str = "backward",
        prefix: str | None = None,
        suffix: str | None = None,
    ) -> DataFrame:
        """Point-in-time (asof) join (Daft's ``join_asof``): every left row, with the right row of
        equal ``by`` keys whose single ``on`` key is the latest at or before its own
        (``strategy="backward"``), the earliest at or after (``"forward"``) or the closest
        (``"nearest"``, a tie going forward); nulls where there is none or the left key is null.
        Output: the left columns, then the right ones except keys named as the left's (clashing
        names get ``prefix``, default "right.", and ``suffix``). Row order is not defined.
        Raises ValueError for ``on`` with ``left_on``/``right_on``, a missing key, ``by`` with
        ``left_by``/``right_by``, ``by`` lists of different lengths or an unknown strategy;
        KetchTypeError for keys without a common type. See ``ketch.dataframe_ops.join_asof`` for
        how it is planned."""
        from ketch.dataframe_ops import join_asof

        return join_asof.join_asof(
            self,
            other,
            on=on,
            left_on=left_on,
            right_on=right_on,
            by=by,
            left_by=left_by,
            right_by=right_by,
            strategy=strategy,
            prefix=prefix,
            suffix=suffix,
        )

    def join(
        self,
        other: DataFrame,
        on: str | Expression | list[str | Expression] | None = None,
        left_on: str | Expression | list[str | Expression] | None = None,
        right_on: str | Expression | list[str | Expression] | None = None,
        how: str = "inner",
        strategy: str | None = None,
        prefix: str | None = None,
        suffix: str | None = None,
    ) -> DataFrame:
        """Column-wise join with ``other`` (Daft's ``join``). ``how``: inner, left, right, outer,
        semi, anti or cross (every pair of rows; no keys). Keys are column names or expressions
        (``col("a") + 1``); key pairs of different types are compared in their common supertype
        (int32 with int64 as int64, int64 with float64 as float64; a null-typed side takes the
        other's type). Output (Daft's order): keys named the same on both sides and given as
        plain columns, once each, first (in key order; in the common type; for outer joins the
        non-null of both sides), then the other left columns, then the right ones (none for
        semi/anti: the left columns as they are); right columns whose names clash
        get ``prefix`` (default "right.") and ``suffix`` (default ""). ``strategy``: None (the
        engine chooses), "hash", "sort_merge" (inner only) or "broadcast" (not outer); the Ray
        runner broadcasts the right side for "broadcast" and shuffles both for the others; the
        native runner hash-joins. Row order is not defined.
        Raises KetchValueError (a ValueError, as Daft's) for an unknown ``how`` or ``strategy``,
        ``on`` together with ``left_on``/``right_on``, keys with a cross join, or key lists of
        different lengths; KetchTypeError naming both keys and types for keys without a common
        type (a string with a number), all when the plan is built."""
        from ketch.dataframe_ops import join

        return join.join(self, other, on, left_on, right_on, how, strategy, prefix, suffix)

    def explode(
        self,
        *columns: str | Expression,
        index_column: str | None = None,
        ignore_empty_and_null: bool = False,
    ) -> DataFrame:
        """One row per element of the list columns (equal lengths per row when several); other
        columns repeat; a null or empty list gives one row with null there, unless
        ``ignore_empty_and_null`` drops such rows. ``index_column`` names a new uint64 column (last)
        holding each element's position in its list (null for a null or empty list's row).
        Raises KetchTypeError for a column that is not a list, ColumnNotFoundError for a missing
        column, KetchValueError for an ``index_column`` that already exists."""
        from ketch.dataframe_ops import reshape

        return reshape.explode(self, columns, index_column, ignore_empty_and_null)

    def concat(self, other: DataFrame) -> DataFrame:
        """The rows of this DataFrame followed by those of ``other``. Raises KetchValueError (a
        ValueError, as Daft's) unless both schemas are exactly equal (names and types, in order)."""
        from ketch.dataframe_ops import set_ops

        set_ops.check_same_schema(self, other)
        return DataFrame(self._plan.concat(other._plan))

    # -- set operations, reshaping, cleaning, summaries (Daft's surface; see ketch.dataframe_ops) -----
    def union(self, other: DataFrame) -> DataFrame:
        """Distinct rows of both DataFrames (SQL ``UNION``), columns matched by position: names
        are this DataFrame's, each column cast to the supertype of both sides' types (Daft's
        rules: int64 with float64 gives float64, anything but binary/list with a string gives a
        string). Nulls compare equal. Row order is not defined.
        Raises KetchValueError (a ValueError) when the numbers of columns differ or two columns
        have no common type."""
        from ketch.dataframe_ops import set_ops

        return set_ops.union_all(self, other, "union").distinct()

    def union_all(self, other: DataFrame) -> DataFrame:
        """All rows of this DataFrame then all of ``other`` (SQL ``UNION ALL``), duplicates kept,
        columns matched by position as in ``union`` (same errors)."""
        from ketch.dataframe_ops import set_ops

        return set_ops.union_all(self, other, "union_all")

    def union_by_name(self, other: DataFrame) -> DataFrame:
        """Distinct rows of both DataFrames with columns matched by name: this DataFrame's
        columns, then those only ``other`` has; a side lacking a column gives nulls there; a
        column on both sides takes the supertype of its types. Row order is not defined.
        Raises KetchValueError when a shared column's types have no common type."""
        from ketch.dataframe_ops import set_ops

        return set_ops.union_all_by_name(self, other, "union_by_name").distinct()

    def union_all_by_name(self, other: DataFrame) -> DataFrame:
        """As ``union_by_name`` but keeping duplicates (this DataFrame's rows first)."""
        from ketch.dataframe_ops import set_ops

        return set_ops.union_all_by_name(self, other)

    def intersect(self, other: DataFrame) -> DataFrame:
        """Distinct rows of this DataFrame that also occur in ``other`` (SQL ``INTERSECT``),
        compared by position with nulls equal; output names are this DataFrame's. Row order is
        not defined. Raises KetchValueError unless both have as many columns with the same type
        at each position (Daft's rule: no implicit casts here)."""
        from ketch.dataframe_ops import set_ops

        return set_ops.intersect(self, other)

    def intersect_all(self, other: DataFrame) -> DataFrame:
        """Rows occurring in both, each ``min(count here, count in other)`` times (SQL
        ``INTERSECT ALL``); same matching and errors as ``intersect``."""
        from ketch.dataframe_ops import set_ops

        return set_ops.intersect_all(self, other)

    def except_distinct(self, other: DataFrame) -> DataFrame:
        """Distinct rows of this DataFrame that do not occur in ``other`` (SQL ``EXCEPT``); same
        matching and errors as ``intersect``."""
        from ketch.dataframe_ops import set_ops

        return set_ops.except_distinct(self, other)

    def except_all(self, other: DataFrame) -> DataFrame:
        """Rows of this DataFrame, each ``count here - count in other`` times where positive (SQL
        ``EXCEPT ALL``); same matching and errors as ``intersect``."""
        from ketch.dataframe_ops import set_ops

        return set_ops.except_all(self, other)

    def unpivot(
        self,
        ids: Any,
        values: Any = None,
        variable_name: str = "variable",
        value_name: str = "value",
    ) -> DataFrame:
        """Wide to long (Daft's ``unpivot``): for each input row and each column of ``values``
        (names or Expressions; default: every column not in ``ids``), one row with the ``ids``
        columns, ``variable_name`` (string: the value column's name) and ``value_name`` (the
        value, cast to the supertype of all value columns' types by Daft's rules). Output
        columns: ids..., variable, value; rows come row by row, each row's values in ``values``
        order. The input is read once.
        Raises KetchValueError when there is no value column or output names clash,
        KetchTypeError when the value columns have no common type, ColumnNotFoundError for a
        missing column."""
        from ketch.dataframe_ops import reshape

        return reshape.unpivot(self, ids, values, variable_name, value_name)

    melt = unpivot  # Daft's alias

    def drop_duplicates(self, *subset: str | Expression) -> DataFrame:
        """Alias of ``distinct``: unique rows over all columns, or over ``subset`` keeping one
        value of the other columns."""
        return self.distinct(*subset)

    def drop_null(self, *cols: str | Expression) -> DataFrame:
        """Drops the rows with a null in any of ``cols`` (default: every column). NaN is not
        null: it is kept (see ``drop_nan``)."""
        from ketch.dataframe_ops import cleaning

        return cleaning.drop_null(self, cols)

    def drop_nan(self, *cols: str | Expression) -> DataFrame:
        """Drops the rows with a NaN in any float32/float64 column among ``cols`` (default: every
        column); other columns given are ignored. Nulls as in Daft 0.7.26: with a single float
        column a null row is dropped too, with several a null counts as not NaN and is kept."""
        from ketch.dataframe_ops import cleaning

        return cleaning.drop_nan(self, cols)

    def count(self, *cols: str | Expression) -> DataFrame:
        """A one-row DataFrame of counts. With no argument, ``"*"`` or an int: one uint64 column
        ``count``, the number of rows (nulls included). With columns: one uint64 column per
        column, named as it, counting its non-null values. Raises ValueError when ``"*"`` is
        mixed with column names."""
        from ketch.dataframe_ops import summary

        return summary.count(self, cols)

    def describe(self) -> DataFrame:
        """The schema as a DataFrame: one row per column, string columns ``column_name`` and
        ``type`` (the type as Ketch prints it). Runs nothing."""
        from ketch.dataframe_ops import summary

        return summary.describe(self)

    def summarize(self) -> DataFrame:
        """Column statistics, one row per column (one aggregation pass over the data): ``column``
        and ``type`` (strings), ``min`` and ``max`` (as strings), ``count`` (non-null values),
        ``count_nulls`` and ``approx_count_distinct`` (uint64; computed exactly). ``min`` and
        ``max`` are null for columns without an order (binary, lists, structs, images,
        tensors...); ``approx_count_distinct`` is null for those the engine cannot hash (all of
        them but binary).
        Raises ValueError for a DataFrame without columns."""
        from ketch.dataframe_ops import summary

        return summary.summarize(self)

    def to_pylist(self, maps_as_pydicts: str | None = None) -> list[dict[str, Any]]:
        """The rows as a list of dicts ``{column: value}`` (as ``iter_rows``: images as numpy
        arrays). ``maps_as_pydicts`` ("lossy" / "strict") is accepted for Daft compatibility;
        Arrow map columns come back as lists of (key, value) tuples either way.
        Raises ValueError for another ``maps_as_pydicts``."""
        if maps_as_pydicts not in (None, "lossy", "strict"):
            raise ValueError(
                f"to_pylist(): maps_as_pydicts must be None, 'lossy' or 'strict', got {maps_as_pydicts!r}"
            )
        return list(self.iter_rows())

    def sample(
        self,
        fraction: float | None = None,
        size: int | None = None,
        with_replacement: bool = False,
        seed: int | None = None,
    ) -> DataFrame:
        """A random sample of the rows; give exactly one of ``fraction`` and ``size`` (Daft's API).

        ``fraction``: about that share of the rows (Bernoulli per row; Poisson copies with
        replacement), streaming. ``size``: exactly ``size`` rows drawn uniformly from the whole
        input (reservoir sampling, a blocking operator that holds about 2 × ``size`` rows; on the
        Ray runner the input is gathered on the driver first). Reproducible for a given ``seed``
        (any int; it is reduced modulo 2**64).

        Raises ValueError when both or neither of ``fraction``/``size`` are given, for a negative
        ``fraction`` (or one above 1 without replacement) or a negative ``size``; TypeError for a
        ``size`` that is not an int. Without replacement, a ``size`` larger than the number of
        rows fails when the query runs ("Cannot take a sample larger than the population when
        'replace=False'", as Daft)."""
        import random

        if fraction is not None and size is not None:
            raise ValueError("Must specify either `fraction` or `size`, but not both")
        if fraction is None and size is None:
            raise ValueError("Must specify either `fraction` or `size`")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise ValueError(f"sample(): seed must be an int, got {seed!r}")
        seed = random.getrandbits(63) if seed is None else seed % 2**64
        if size is not None:
            if not isinstance(size, int) or isinstance(size, bool):
                raise TypeError(
                    f"DataFrame.sample received wrong input type: size must be an int, got {size!r}"
                )
            if size < 0:
                raise ValueError(f"size should be non-negative, but got {size}")
            return DataFrame(self._plan.sample(1.0, bool(with_replacement), seed, size))
        if not isinstance(fraction, int | float) or fraction < 0 or (fraction > 1 and not with_replacement):
            raise ValueError(
                f"sample(): fraction must be in [0, 1] (or >= 0 with replacement), got {fraction!r}"
            )
        return DataFrame(self._plan.sample(float(fraction), bool(with_replacement), seed))

    # -- partitions ------------------------------------------------------------------------------------
    def repartition(self, num: int | None, *partition_by: str | Expression) -> DataFrame:
        """Redistributes the rows into ``num`` partitions (a shuffle). With ``partition_by``
        columns (names or expressions), hash partitioning: rows with equal keys, nulls included,
        land in the same partition (Ketch's own 64-bit row hash, the same in every process).
        Without, random partitioning, which spreads rows evenly. ``num=None`` keeps the current
        number of partitions. Row order is not kept.

        Raises ValueError when ``num`` is not a positive int or None; ColumnNotFoundError for a
        missing column; KetchTypeError for a column that cannot be hashed (image, tensor,
        embedding, list, struct or Python-object columns)."""
        if num is not None and (not isinstance(num, int) or isinstance(num, bool) or num < 1):
            raise ValueError(f"repartition(): num must be a positive int or None, got {num!r}")
        names: list[str] = []
        computed: dict[str, Expression] = {}
        for i, key in enumerate(partition_by):
            if isinstance(key, str):
                self._check_columns([key])
                names.append(key)
            elif isinstance(key, Expression):
                name = key.name() if key._native.is_column() else f"__ketch_partition_key_{i}"
                if key._native.is_column():
                    self._check_columns([name])
                else:
                    computed[name] = key
                names.append(name)
            else:
                raise TypeError(
                    f"repartition(): partition_by takes column names or Expressions, got {type(key).__name__}"
                )
        df = self.with_columns(computed) if computed else self
        out = DataFrame(df._plan.repartition(-1 if num is None else num, names))
        return out.exclude(*computed) if computed else out

    def into_partitions(self, num: int) -> DataFrame:
        """Splits or coalesces adjacent partitions into exactly ``num`` partitions, without a
        shuffle; row order is kept. Splitting a partition of r rows into k gives sizes that differ
        by at most one row; with fewer rows than partitions the rest are empty. Raises ValueError
        unless ``num`` is a positive int."""
        if not isinstance(num, int) or isinstance(num, bool) or num < 1:
            raise ValueError(f"into_partitions(): num must be a positive int, got {num!r}")
        return DataFrame(self._plan.into_partitions(num))

    def into_batches(self, batch_size: int) -> DataFrame:
        """Cuts the rows, in order, into batches of exactly ``batch_size`` rows (only the last batch
        of the whole stream may be smaller: stricter than Daft's 80 % window) for everything
        downstream: a UDF without a ``batch_size`` of its own gets each batch whole, and each batch
        becomes a partition of its own (``write_parquet`` writes one file per batch). Raises
        ValueError unless ``batch_size`` is a positive int."""
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"into_batches(): batch_size must be a positive int, got {batch_size!r}")
        return DataFrame(self._plan.into_batches(batch_size))

    def num_partitions(self) -> int:
        """The number of partitions: of the materialized result once collected, else the number the
        query will produce (scan tasks for file scans, ``num`` after repartition / into_partitions,
        one after a sort, aggregation, join or limit; after ``into_batches`` over input of unknown
        size, an estimate)."""
        if self._partition_rows is not None:
            return len(self._partition_rows)
        optimized = _optimize(self._plan, get_execution_config())
        count, _exact = optimized.num_partitions()
        return int(count)

    def iter_partitions(self, results_buffer_size: int | str | None = "num_cpus") -> Iterator[DataFrame]:
        """Runs the query and yields each partition, as a materialized DataFrame, as soon as it
        is complete (not after the whole result). ``results_buffer_size`` is accepted for Daft
        compatibility; the engine buffers at most 16 batches ahead of the reader. Stopping early
        (``break``) cancels the query."""
        if self._result is not None:
            for part in self._partitions_of_result():
                yield _materialized(part)
            return
        current: list[pa.RecordBatch] = []
        current_partition = 0
        for partitions, reader in self._stream():
            for partition, batch in zip(partitions, reader, strict=True):
                while partition > current_partition:
                    yield _materialized(pa.Table.from_batches(current, schema=reader.schema))
                    current = []
                    current_partition += 1
                if batch.num_rows:
                    current.append(batch)
        yield _materialized(pa.Table.from_batches(current, schema=self._arrow_schema()))

    def _partitions_of_result(self) -> list[pa.Table]:
        assert self._result is not None
        out, offset = [], 0
        for rows in self._partition_rows or [self._result.num_rows]:
            out.append(self._result.slice(offset, rows))
            offset += rows
        return out

    def _stream(self) -> Iterator[tuple[list[int], pa.RecordBatchReader]]:
        """The query's output as it is produced: (partition of each batch, batches)."""
        from ketch.progress import ProgressBars
        from ketch.runners import get_runner
        from ketch.udf.errors import reraise_udf_error

        config = get_execution_config()
        stats = _core.ExecutionStats()
        try:
            optimized = _optimize(self._plan, config)
            with ProgressBars(stats, config):
                # Closing this generator closes the runner's: an abandoned iteration cancels the query.
                yield from get_runner().stream(optimized, config, stats)
        except KetchError as error:
            reraise_udf_error(error)
            raise

    # -- execution -------------------------------------------------------------------------------------
    def _execute_partitioned(
        self, plan: _core.PyPlan, stats: _core.ExecutionStats | None = None
    ) -> tuple[pa.Table, list[int]]:
        """Runs ``plan``; returns the result and its rows per partition."""
        from ketch.progress import ProgressBars
        from ketch.runners import get_runner

        config = get_execution_config()
        stats = stats or _core.ExecutionStats()
        try:
            optimized = _optimize(plan, config)
            with ProgressBars(stats, config):
                return get_runner().execute(optimized, config, stats)
        except KetchError as error:
            from ketch.udf.errors import reraise_udf_error

            reraise_udf_error(error)
            raise

    def _execute(self, plan: _core.PyPlan, stats: _core.ExecutionStats | None = None) -> pa.Table:
        return self._execute_partitioned(plan, stats)[0]

    def explain_analyze(self, file: IO[str] | None = None) -> _core.ExecutionStats:
        """Runs the query and prints the physical plan, then per operator: morsels, rows in and out,
        bytes out, CPU seconds (thread CPU time summed over workers) and peak memory (the most bytes
        of the query's memory budget its outputs in flight, or a blocking sink's buffered state,
        held at once), then the wall time and the process's peak RSS, and the custom counters
        UDFs incremented (``ketch.udf.metrics``; ``ketch.udf.metrics.last_query_metrics()``).
        Returns the native ``ExecutionStats``; the result is kept as by ``collect``."""
        import resource
        import time

        out = file or sys.stdout
        optimized = _optimize(self._plan, get_execution_config())
        print("== Physical Plan ==\n", file=out)
        print(optimized.physical_repr(get_execution_config().to_native()), file=out)
        from ketch.udf import metrics as udf_metrics

        stats = _core.ExecutionStats()
        counters_before = udf_metrics.snapshot()
        start = time.perf_counter()
        self._materialize(*self._execute_partitioned(self._plan, stats))
        wall = time.perf_counter() - start
        counters = udf_metrics.since(counters_before)
        print("== Execution ==\n", file=out)
        columns = ("pipeline", "operator", "morsels", "rows in", "rows out", "MB out", "CPU s", "peak MB")
        print("{:>8}  {:<24}{:>9}{:>12}{:>12}{:>10}{:>9}{:>9}".format(*columns), file=out)
        for op in stats.operators():
            row = (
                op["pipeline"],
                op["name"],
                op["morsels"],
                op["rows_in"],
                op["rows_out"],
                op["bytes_out"] / 1e6,
                op["cpu_seconds"],
                op["peak_memory_bytes"] / 1e6,
            )
            print("{:>8}  {:<24}{:>9}{:>12}{:>12}{:>10.2f}{:>9.3f}{:>9.2f}".format(*row), file=out)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"\nwall time {wall:.3f} s, peak RSS {peak_mb:.0f} MB, "
            f"max morsels in flight {stats.max_morsels_in_flight}",
            file=out,
        )
        scan = stats.scan
        if scan["scan_tasks"] or scan["files_pruned"]:
            print(
                f"scan: {scan['scan_tasks']} tasks, {scan['files_read']} files read "
                f"({scan['files_pruned']} pruned by partition), {scan['row_groups_read']} row groups read "
                f"({scan['row_groups_pruned']} pruned by statistics), "
                f"{scan['bytes_read'] / 1e6:.2f} MB read, "
                f"{scan['rows_read']} rows decoded"
                + (f", {scan['frames_decoded']} video frames decoded" if scan.get("frames_decoded") else "")
                + (
                    f", {scan['packets_dropped']} damaged packets dropped"
                    if scan.get("packets_dropped")
                    else ""
                ),  # noqa: E501
                file=out,
            )
        if counters:
            print("\n" + udf_metrics.format_metrics(counters), file=out)
        from ketch.runners import get_runner

        report = getattr(get_runner(), "stage_report", None)  # the Ray runner's stages
        if report is not None:
            print("\n== Stages ==\n", file=out)
            print(report(), file=out)
        return stats

    def collect(self) -> DataFrame:
        """Runs the query and keeps the result in memory, with its partitions
        (``num_partitions()``); later operations start from it."""
        if self._result is None:
            self._materialize(*self._execute_partitioned(self._plan))
        return self

    def to_arrow(self) -> pa.Table:
        """The result as a pyarrow Table (zero-copy from the engine's buffers)."""
        return self.collect()._result  # type: ignore[return-value]

    def to_pydict(self) -> dict[str, list[Any]]:
        """``{column: [values]}``; images become numpy (H, W, C) uint8 arrays."""
        table = self.to_arrow()
        return {name: to_pylist(table.column(name)) for name in table.column_names}

    def to_pandas(self) -> Any:
        """A pandas DataFrame; image columns hold numpy (H, W, C) uint8 arrays."""
        from ketch._optional import require

        pd = require("pandas", "to_pandas")

        table = self.to_arrow()
        data = {}
        for name in table.column_names:
            column = table.column(name)
            if DataType(column.type).extension_name:
                data[name] = pd.Series(to_pylist(column), dtype=object)
            else:
                data[name] = column.to_pandas()
        return pd.DataFrame(data)

    def iter_rows(
        self, results_buffer_size: int | str | None = "num_cpus", column_format: str = "python"
    ) -> Iterator[dict[str, Any]]:
        """Rows as dicts ``{column: value}``, streamed: the first rows come while the query still
        runs, and stopping early (``break``) cancels it. ``column_format="python"`` gives Python
        values (images as numpy arrays), ``"arrow"`` pyarrow scalars. ``results_buffer_size`` is
        accepted for Daft compatibility. Raises ValueError for another ``column_format``."""
        if column_format not in ("python", "arrow"):
            raise ValueError(f"iter_rows(): column_format must be 'python' or 'arrow', got {column_format!r}")

        def rows_of(table: pa.Table | pa.RecordBatch) -> Iterator[dict[str, Any]]:
            names = table.schema.names
            if column_format == "arrow":
                columns = [table.column(i) for i in range(len(names))]
                for i in range(table.num_rows):
                    yield {n: c[i] for n, c in zip(names, columns, strict=True)}
                return
            data = [to_pylist(table.column(i)) for i in range(len(names))]
            for i in range(table.num_rows):
                yield {n: values[i] for n, values in zip(names, data, strict=True)}

        if self._result is not None:
            yield from rows_of(self._result)
            return
        for _partitions, reader in self._stream():
            for batch in reader:
                yield from rows_of(batch)

    def count_rows(self) -> int:
        """Number of rows; reads no column it does not need."""
        if self._result is not None:
            return self._result.num_rows
        table = self._execute(self._plan.project([]))
        return table.num_rows

    def __len__(self) -> int:
        if self._result is None:
            raise RuntimeError(
                "len() needs a materialized DataFrame: call .collect() first, or use count_rows()"
            )
        return self._result.num_rows

    def show(
        self,
        n: int = 8,
        format: str | None = None,
        verbose: bool | None = None,
        max_width: int | None = None,
        align: str | None = None,
        columns: list[Any] | None = None,
    ) -> None:
        """Prints the first ``n`` rows as a table (Daft's layout: names, then types, then rows).
        With any of ``format`` ("fancy", "plain", "simple", "grid", "markdown"), ``verbose``
        (types in the header), ``max_width`` (cells cut with "…"; default 30) or ``align``
        ("left", "right", "center", "auto"), Daft's preview formats instead (see
        ``ketch.display.preview_formats``). Raises ValueError for an unknown format or align,
        or options with "html" (as Daft); NotImplementedError for ``columns``."""
        if columns is not None:
            raise NotImplementedError("show(columns=...): per-column overrides are not supported yet")
        if (format, verbose, max_width, align) != (None, None, None, None):
            from ketch.display.dataframe_repr import show_formatted

            print(show_formatted(self, n, format, verbose, max_width, align))
            return
        from ketch.display.dataframe_repr import known_total, text_table

        table = self.limit(n).to_arrow()
        footer = f"(Showing first {min(n, table.num_rows)}{known_total(self, table.num_rows, n)} rows)"
        if table.num_rows == 0:
            from ketch.display.dataframe_repr import NO_ROWS

            footer = NO_ROWS
        print(text_table(table.schema, table) + "\n\n" + footer)

    def explain(self, show_all: bool = False, file: IO[str] | None = None) -> None:
        """Prints the logical plan; with ``show_all`` also the optimized logical plan (with the
        filters and columns pushed into scans) and the physical plan, each node of those two with
        a ``Stats = { ... }`` line: its estimated output rows ("Num rows" when exact: in-memory
        data, unfiltered Parquet footers), size in bytes (Arrow buffers; Parquet: uncompressed
        column chunks read), a filter's selectivity and its number of partitions. On the Ray
        runner it then prints the distributed plan: the stages the query would run as, with their
        exchanges (shuffle algorithm, broadcast) and task counts, without running it."""
        out = file or sys.stdout
        if not show_all:
            print("== Unoptimized Logical Plan ==\n", file=out)
            print(repr(self._plan), file=out)
            return
        config = get_execution_config().to_native()
        optimized = _optimize(self._plan, get_execution_config())
        print("== Unoptimized Logical Plan ==\n", file=out)
        print(repr(self._plan), file=out)
        print("== Optimized Logical Plan ==\n", file=out)
        print(optimized.repr_with_stats(), file=out)
        print("== Physical Plan ==\n", file=out)
        print(optimized.physical_repr(config, with_stats=True), file=out)
        from ketch.runners import get_runner

        describe = getattr(get_runner(), "describe_plan", None)  # the Ray runner's stages
        if describe is not None:
            print("\n== Distributed Plan ==\n", file=out)
            print(describe(optimized, get_execution_config()), file=out)

    def write_parquet(
        self,
        root_dir: str | os.PathLike[str],
        compression: str = "snappy",
        write_mode: str = "append",
        write_success_file: bool = False,
        partition_cols: list[Any] | None = None,
        io_config: Any = None,
        column_compression: dict[str, str] | None = None,
        single_file: bool = False,
    ) -> DataFrame:
        """Writes the rows as Parquet files under ``root_dir`` (a local directory, made if missing,
        or an ``s3://bucket/prefix`` URL reached with ``io_config``'s S3Config) and returns a
        DataFrame of the written files: ``path`` (string), then the partition columns (their
        values for each file, their own dtypes) when partitioned.

        - Files are named ``<random hex>-<k>.parquet``: one per non-empty partition of the
          DataFrame (one empty file, keeping the schema, when there are no rows at all).
        - ``compression``: ``"snappy"`` (default), ``"zstd"``, ``"gzip"``, ``"lz4"``,
          ``"brotli"`` or ``"none"``, for every column chunk.
        - ``partition_cols``: column names or expressions (computed first); rows go to Hive-style
          directories ``root_dir/<col>=<value>/...`` in the order given, values escaped as
          Hive/Arrow/Daft do (every byte but ``A-Z a-z 0-9 - _ . ~`` as ``%XX``, so ``a/b`` or
          ``../x`` stay one directory name inside ``root_dir``), nulls as
          ``__HIVE_DEFAULT_PARTITION__``; the partition columns are left out of the files (read them
          back with ``read_parquet(root_dir, hive_partitioning=True)``). Partition columns must be
          numbers, strings, booleans, dates or timestamps.
        - ``write_mode``: ``"append"`` (default) adds files, never replacing or removing one;
          ``"overwrite"`` then removes every other file under ``root_dir``;
          ``"overwrite-partitions"`` (needs ``partition_cols``) removes the other files only in the
          partition directories this write wrote to.
        - ``write_success_file``: an empty ``_SUCCESS`` file in ``root_dir`` once committed.
        - ``single_file``: every row in one file at ``root_dir`` itself (a file path; an
          existing file is replaced, as Daft does; not with ``partition_cols``: ValueError).
        - ``column_compression`` (per-column codecs) is not supported yet: KetchNotImplementedError.
        Parameters are in Daft's order.

        Atomic: nothing appears under ``root_dir`` until every file is complete (local files are
        hidden temporaries renamed at the end; S3 and Ray-runner writes go to a hidden
        ``.ketch-staging-*`` location and are moved into place at the end), and old files are
        removed only after that, so a failed query leaves the previous dataset as it was and no
        temporary behind. Raises ValueError for an unknown ``write_mode``, KetchValueError for an
        unknown compression or a bad partition column, KetchIOError naming the path and the OS's
        reason when a file cannot be written (credentials never appear in messages)."""
        from ketch.io.write_options import check_unsupported
        from ketch.io.writers import write_files

        check_unsupported("write_parquet", column_compression=column_compression)
        return write_files(
            self,
            "parquet",
            root_dir,
            write_mode,
            partition_cols,
            io_config,
            compression,
            single_file=single_file,
            write_success_file=write_success_file,
        )

    def write_csv(
        self,
        root_dir: str | os.PathLike[str],
        write_mode: str = "append",
        partition_cols: list[Any] | None = None,
        io_config: Any = None,
        delimiter: str | None = None,
        quote: str | None = None,
        escape: str | None = None,
        header: bool | None = True,
        date_format: str | None = None,
        timestamp_format: str | None = None,
    ) -> DataFrame:
        """Writes the rows as CSV files (``<random hex>-<k>.csv``, Arrow's CSV writer: a header
        line, RFC 4180 quoting, nulls as empty fields, timestamps as ``YYYY-MM-DD HH:MM:SS``)
        under ``root_dir`` and returns the written paths, as ``write_parquet`` does (same
        ``write_mode``, ``partition_cols``, ``io_config``, atomicity and errors). Raises
        KetchTypeError naming the column for types CSV cannot hold (lists, structs, binary,
        tensors, images). Read back with ``read_csv``. ``date_format`` / ``timestamp_format``
        render date / timestamp columns with strftime specifiers (``"%d/%m/%Y"``), as Daft.
        ``delimiter``, ``quote``, ``escape`` and ``header=False`` (Daft's) are not supported
        yet: KetchNotImplementedError."""
        from ketch.io.write_options import check_unsupported
        from ketch.io.writers import write_files

        check_unsupported(
            "write_csv",
            delimiter=delimiter if delimiter != "," else None,
            quote=quote if quote != '"' else None,
            escape=escape,
            header=None if header in (None, True) else "False",
        )
        return write_files(
            self,
            "csv",
            root_dir,
            write_mode,
            partition_cols,
            io_config,
            date_format=date_format,
            timestamp_format=timestamp_format,
        )

    def write_json(
        self,
        root_dir: str | os.PathLike[str],
        write_mode: str = "append",
        partition_cols: list[Any] | None = None,
        io_config: Any = None,
        ignore_null_fields: bool | None = False,
        date_format: str | None = None,
        timestamp_format: str | None = None,
    ) -> DataFrame:
        """Writes the rows as newline-delimited JSON files (``<random hex>-<k>.json``, one object
        per row with every column, nulls as ``null``) under ``root_dir`` and returns the written
        paths, as ``write_parquet`` does (same ``write_mode``, ``partition_cols``, ``io_config``,
        atomicity and errors). Strings are UTF-8 with ``"``, ``\\`` and control characters
        escaped; NaN and infinities become ``null``; dates are ``"YYYY-MM-DD"``, timestamps ISO
        8601 ``"YYYY-MM-DDTHH:MM:SS.ffffff"`` (``Z`` when the type has a time zone); lists are
        arrays and structs objects. Raises KetchTypeError naming the column for binary columns
        (JSON has no bytes). Read back with ``read_json``. ``date_format`` / ``timestamp_format``
        render date / timestamp columns as strings with strftime specifiers, as Daft.
        ``ignore_null_fields=True`` is not supported yet: KetchNotImplementedError."""
        from ketch.io.write_options import check_unsupported
        from ketch.io.writers import write_files

        check_unsupported("write_json", ignore_null_fields=ignore_null_fields)
        return write_files(
            self,
            "json",
            root_dir,
            write_mode,
            partition_cols,
            io_config,
            date_format=date_format,
            timestamp_format=timestamp_format,
        )

    def write_lance(
        self,
        uri: str | os.PathLike[str],
        mode: str = "create",
        io_config: Any = None,
        schema: pa.Schema | None = None,
        max_rows_per_file: int | None = None,
        max_rows_per_group: int = 1024,
        **kwargs: Any,
    ) -> DataFrame:
        """Writes the rows to the Lance dataset at ``uri`` (a local directory or ``s3://`` URL) in
        one atomic commit, and returns a one-row DataFrame of the write's metadata: int64 columns
        ``num_fragments``, ``num_deleted_rows``, ``num_small_files`` (of the dataset after the
        write, as Daft returns them), ``version`` (the version this write created) and
        ``num_rows_written``.

        ``mode``: "create" (the default, as in Daft) fails when a dataset exists; "append" adds a
        version with these rows (creates the dataset when there is none); "overwrite" adds a
        version holding only these rows (older versions stay readable with
        ``read_lance(version=)``). The query's tasks write the fragments (on the Ray runner, the
        engine workers); the driver commits once after every task succeeded, so a failed query
        leaves the dataset as it was. Rows are batched into fragments of up to
        ``max_rows_per_file`` rows (row groups of ``max_rows_per_group``) whatever the batch sizes
        upstream; by default Lance's 1,048,576 rows, or fewer for wide rows so that a fragment
        (held in memory while written) is about 256 MiB (e.g. 173,857 rows of a 384-dim float32
        embedding and an id). ``schema`` (a ``pyarrow.Schema`` with the same column names) casts the columns
        before writing; other keyword arguments go to ``lance.fragment.write_fragments`` (e.g.
        ``data_storage_version``). Ketch's Image, FixedShapeImage, Tensor and Embedding columns keep
        their types (``read_lance`` returns them).

        Raises KetchValueError for "create" on an existing dataset, for "append" with a schema
        other than the dataset's (naming both), or for a ``schema`` with other column names;
        ValueError for a bad ``mode`` or size; the query's own errors (UDFError, ...) otherwise."""
        from ketch.io.lance_write import write_lance

        return write_lance(
            self, uri, mode, io_config, schema, max_rows_per_file, max_rows_per_group, **kwargs
        )

    def __repr__(self) -> str:
        """Daft's layout: the first ``num_preview_rows`` (default 8) rows of a materialized
        DataFrame under column names and types, or only the schema when nothing has run."""
        from ketch.display.dataframe_repr import text_repr

        return text_repr(self._arrow_schema(), self._result)

    def _repr_html_(self) -> str:
        """The notebook table (see ``ketch.display.dataframe_repr.html_repr``): images as PNG
        thumbnails of at most 128 px, tensors and embeddings as shapes, long strings cut."""
        from ketch.display.dataframe_repr import html_repr

        return html_repr(self._arrow_schema(), self._result)


def _optimize(plan: _core.PyPlan, config: Any) -> _core.PyPlan:
    """``plan`` optimized for the runner the query will run on: the runner may adjust the
    planning-only settings of ``config`` (the Python ExecutionConfig), e.g. the Ray runner cuts
    scan tasks for the cluster's CPUs rather than this process's threads."""
    from ketch.runners import get_runner

    planning = getattr(get_runner(), "planning_config", None)
    return plan.optimize(config=(planning(config) if planning else config).to_native())


def _materialized(table: pa.Table) -> DataFrame:
    """A DataFrame holding ``table`` as its (one-partition) result."""
    df = DataFrame(_core.PyPlan.in_memory(table))
    df._result = table
    df._partition_rows = [table.num_rows]
    return df


def _as_text(values: pa.Array | pa.ChunkedArray) -> list[str]:
    """``values`` cast to string by the engine (Daft's text of floats: ``1.0``, not Arrow's ``1``)."""
    cast = _materialized(pa.table({"v": values})).select(col("v").cast(pa.string()))
    return cast.to_arrow().column(0).to_pylist()


def _column_name(column: str | Expression) -> str:
    if isinstance(column, str):
        return column
    if isinstance(column, Expression) and column._native.is_column():
        return column.name()
    raise KetchNotImplementedError(f"only plain columns are supported here, got {column!r}")


def _flatten(items: tuple[Any, ...]) -> list[Expression]:
    out: list[Expression] = []
    for item in items:
        out.extend(item if isinstance(item, list) else [item])
    return out


class GroupedDataFrame(GroupedAggregationShorthands):
    """The result of ``DataFrame.groupby``: aggregate with ``agg`` or the shortcuts.
    ``group_by`` holds the keys' output column names, ``keys`` the key expressions."""

    def __init__(self, df: DataFrame, keys: list[Expression]) -> None:
        if not keys:
            raise ValueError("groupby() needs at least one column")
        self.df = df
        self.keys = keys
        self.group_by = [k.name() for k in keys]

    def agg(self, *to_agg: Expression | list[Expression]) -> DataFrame:
        """One row per group: the keys, then each aggregation (``col("x").sum()``, or any
        expression over aggregations, the group keys and literals, such as
        ``col("x").sum() + 1`` or ``(col("g") + "_x").alias("h")``). Group order is not
        defined; sort afterwards if you need one. Raises ValueError for an entry reading a
        column that is neither a key nor inside an aggregation."""
        exprs = wildcard.expand(_flatten(to_agg), self.df.column_names, skip=self.group_by)
        self._check_key_types()
        from ketch.dataframe_ops.grouped_udfs import lower_udafs
        from ketch.functions.row_ids import reject_row_ids

        reject_row_ids(exprs)
        lowered = lower_udafs(self.df, self.keys, list(self.group_by), exprs)
        if lowered is not None:
            return lowered
        return DataFrame(
            self.df._plan.aggregate_expressions([k._native for k in self.keys], [e._native for e in exprs])
        )

    def _check_key_types(self) -> None:
        """Daft's rule: a group key of the Null type (all-None, untyped) is an error."""
        from ketch.errors import ExpressionTypeError

        schema = self.df._arrow_schema()
        for key in self.keys:
            if pa.types.is_null(key._native.resolve_type(schema)):
                raise ExpressionTypeError(f"Cannot groupby on null type expression: {key!r}")

    def map_groups(self, udf: Expression) -> DataFrame:
        """Applies a UDF call (``@ketch.func.batch`` / ``@ketch.func`` / a ``@ketch.cls`` method
        over columns of the frame) to each group's rows at once (Daft's ``map_groups``): one
        output row per value it returns, after the group's keys; the output column is named as
        the call (its alias, or its first input column). Each group's rows are held together.
        Raises ValueError when ``udf`` is not a UDF call."""
        from ketch.dataframe_ops.grouped_udfs import map_groups

        return map_groups(self, udf)

    def _shortcut(self, method: str, columns: tuple[str, ...]) -> DataFrame:
        names = list(columns) or [n for n in self.df.column_names if n not in self.group_by]
        return self.agg(*[getattr(col(n), method)() for n in names])

    def count(self, *columns: str) -> DataFrame:
        return self._shortcut("count", columns)
