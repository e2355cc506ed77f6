"""Daft's aggregation shorthands (``df.product("x")``, ``df.groupby("k").var("x", ddof=0)``) for
the aggregations of ``ketch.functions.aggregation``. Mixed into ``DataFrame`` (one row over the
whole table) and ``GroupedDataFrame`` (one row per group); each takes column names or
expressions, and with none aggregates every column (but the group keys)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ketch.expressions.expression import Expression, col
from ketch.functions import aggregation

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame


def _columns(
    columns: tuple[str | Expression, ...], available: list[str], skip: list[str]
) -> list[Expression]:
    if not columns:
        return [col(n) for n in available if n not in skip]
    return [c if isinstance(c, Expression) else col(c) for c in columns]


class AggregationShorthands:
    """Shorthands over ``self._shorthand_agg`` (the host's ``agg``) and its columns."""

    def _shorthand_columns(self) -> tuple[list[str], list[str]]:  # (all columns, group keys)
        raise NotImplementedError

    def _shorthand_agg(self, exprs: list[Expression]) -> DataFrame:
        raise NotImplementedError

    def _each(
        self, build: Callable[..., Expression], columns: tuple[str | Expression, ...], **kw: Any
    ) -> DataFrame:
        available, keys = self._shorthand_columns()
        return self._shorthand_agg([build(e, **kw) for e in _columns(columns, available, keys)])

    def sum(self, *cols: str | Expression) -> DataFrame:
        """Sum of each column (int64/uint64/float64; see ``ketch.functions.sum``)."""
        return self._each(aggregation.sum, cols)

    def mean(self, *cols: str | Expression) -> DataFrame:
        """Mean of each column's non-null values (float64)."""
        return self._each(aggregation.mean, cols)

    def min(self, *cols: str | Expression) -> DataFrame:
        """Minimum of each column (nulls skipped)."""
        return self._each(aggregation.min, cols)

    def max(self, *cols: str | Expression) -> DataFrame:
        """Maximum of each column (nulls skipped)."""
        return self._each(aggregation.max, cols)

    def stddev(self, *cols: str | Expression, ddof: int = 1) -> DataFrame:
        """Standard deviation of each column (float64, divisor n - ddof; default 1, the sample
        value, as Daft and ``Expression.stddev``; ``ddof=0`` for the population value)."""
        return self._each(aggregation.stddev, cols, ddof=ddof)

    def any_value(self, *cols: str | Expression) -> DataFrame:
        """Some value of each column (values need not come from the same row)."""
        return self._each(aggregation.any_value, cols)

    def agg_list(self, *cols: str | Expression) -> DataFrame:
        """All values of each column (nulls included) as a list."""
        return self._each(aggregation.list_agg, cols)

    def list_agg(self, *cols: str | Expression) -> DataFrame:
        """All values of each column (nulls included) as a list."""
        return self._each(aggregation.list_agg, cols)

    def agg_concat(self, *cols: str | Expression, delimiter: str | None = None) -> DataFrame:
        """Each string column's values concatenated, ``delimiter`` between them (nulls skipped;
        null for a group without a non-null value; see ``ketch.functions.string_agg``)."""
        return self._each(aggregation.string_agg, cols, delimiter=delimiter)

    def string_agg(self, *cols: str | Expression, delimiter: str | None = None) -> DataFrame:
        """Each string column's values concatenated, ``delimiter`` between them (nulls skipped;
        null for a group without a non-null value; see ``ketch.functions.string_agg``)."""
        return self._each(aggregation.string_agg, cols, delimiter=delimiter)

    def product(self, *cols: str | Expression) -> DataFrame:
        """Product of each column (see ``ketch.functions.product``)."""
        return self._each(aggregation.product, cols)

    def count_distinct(self, *cols: str | Expression) -> DataFrame:
        """Distinct non-null values of each column (uint64)."""
        return self._each(aggregation.count_distinct, cols)

    def var(self, *cols: str | Expression, ddof: int = 1) -> DataFrame:
        """Variance of each column (float64, divisor n - ddof)."""
        return self._each(aggregation.var, cols, ddof=ddof)

    def skew(self, *cols: str | Expression) -> DataFrame:
        """Population skewness of each column (float64)."""
        return self._each(aggregation.skew, cols)

    def bool_and(self, *cols: str | Expression) -> DataFrame:
        """Boolean AND of each boolean column."""
        return self._each(aggregation.bool_and, cols)

    def bool_or(self, *cols: str | Expression) -> DataFrame:
        """Boolean OR of each boolean column."""
        return self._each(aggregation.bool_or, cols)

    def agg_set(self, *cols: str | Expression) -> DataFrame:
        """The distinct non-null values of each column as a list."""
        return self._each(aggregation.list_agg_distinct, cols)

    def list_agg_distinct(self, *cols: str | Expression) -> DataFrame:
        """The distinct non-null values of each column as a list."""
        return self._each(aggregation.list_agg_distinct, cols)

    def median(self, *cols: str | Expression) -> DataFrame:
        """Exact median of each numeric column (float64)."""
        return self._each(aggregation.median, cols)


class GlobalAggregationShorthands(AggregationShorthands):
    """For ``DataFrame``: one row over the whole table."""

    def _shorthand_columns(self) -> tuple[list[str], list[str]]:
        return list(self.column_names), []  # type: ignore[attr-defined]

    def _shorthand_agg(self, exprs: list[Expression]) -> DataFrame:
        return self.agg(*exprs)  # type: ignore[attr-defined,no-any-return]


class GroupedAggregationShorthands(AggregationShorthands):
    """For ``GroupedDataFrame``: one row per group."""

    def _shorthand_columns(self) -> tuple[list[str], list[str]]:
        return list(self.df.column_names), list(self.group_by)  # type: ignore[attr-defined]

    def _shorthand_agg(self, exprs: list[Expression]) -> DataFrame:
        return self.agg(*exprs)  # type: ignore[attr-defined,no-any-return]


# pivot's agg_fn names (Daft's, with their older spellings) -> the aggregation of the value column.
_PIVOT: dict[str, Callable[[Expression], Expression]] = {
    "sum": aggregation.sum,
    "mean": aggregation.mean,
    "avg": aggregation.mean,
    "min": aggregation.min,
    "max": aggregation.max,
    "count": aggregation.count,
    "count_distinct": aggregation.count_distinct,
    "approx_count_distinct": aggregation.approx_count_distinct,
    "product": aggregation.product,
    "stddev": aggregation.stddev,
    "var": aggregation.var,
    "skew": aggregation.skew,
    "median": aggregation.median,
    "bool_and": aggregation.bool_and,
    "bool_or": aggregation.bool_or,
    "any_value": lambda e: aggregation.any_value(e, ignore_nulls=True),
    "list": aggregation.list_agg,
    "agg_list": aggregation.list_agg,
    "list_agg": aggregation.list_agg,
    "set": aggregation.list_agg_distinct,
    "agg_set": aggregation.list_agg_distinct,
    "list_agg_distinct": aggregation.list_agg_distinct,
    "concat": aggregation.string_agg,
    "agg_concat": aggregation.string_agg,
    "string_agg": aggregation.string_agg,
}


def pivot_kinds() -> set[str]:
    """The ``agg_fn`` names ``DataFrame.pivot`` takes."""
    return set(_PIVOT)


def pivot_aggregation(agg_fn: str, value: Expression) -> Expression:
    """The aggregation ``agg_fn`` of ``value`` (a name from :func:`pivot_kinds`)."""
    return _PIVOT[agg_fn](value)
