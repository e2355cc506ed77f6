"""Aggregate functions in Daft's names (``daft.functions``' aggregation part). Each returns an
aggregation expression for ``DataFrame.agg`` / ``GroupedDataFrame.agg`` (one value per group);
used elsewhere (``select``, ``where``) it fails when the plan is built. Input type errors
(``product`` of strings, ``bool_and`` of integers) raise ``ketch.errors.KetchTypeError`` naming the
function, column, type and expression when the aggregation is added to a plan."""

from __future__ import annotations

import math
from typing import Any, Literal

from ketch.expressions.expression import Expression, col

__all__ = [
    "any_value",
    "approx_count_distinct",
    "approx_percentiles",
    "avg",
    "bool_and",
    "bool_or",
    "count",
    "count_distinct",
    "list_agg",
    "list_agg_distinct",
    "max",
    "mean",
    "median",
    "min",
    "percentile",
    "product",
    "skew",
    "stddev",
    "string_agg",
    "sum",
    "var",
]

_builtin_min = min


def count(
    expr: Expression | None = None, mode: Literal["all", "valid", "null"] | Any = "valid"
) -> Expression:
    """Number of values per group (uint64): ``mode`` "valid" (non-null, the default), "null" or
    "all". Without ``expr`` (``mode="all"`` only): Daft's ``count(*)``, ``col("*").count("all")``
    (one count per column in ``agg``; one column counting the rows once aliased). Raises
    ValueError for another mode, or no ``expr`` with a mode other than "all"."""
    mode = getattr(mode, "value", mode)
    text = str(mode).lower()
    if text not in ("valid", "all", "null"):
        raise ValueError(f"count mode must be 'valid', 'all' or 'null', got {mode!r}")
    if expr is None:
        if text != "all":
            raise ValueError("count() without an expression only supports mode='all'.")
        expr = col("*")
    return Expression._call("agg_count", expr, mode=text)


def count_distinct(expr: Expression) -> Expression:
    """Number of distinct non-null values per group (uint64, exact; 0 for a group of nulls).
    Takes any non-nested type; NaN is one value."""
    return Expression._call("agg_count_distinct", expr)


def sum(expr: Expression) -> Expression:  # noqa: A001  (Daft's name)
    """Sum of the non-null values (int64 for signed ints, uint64 unsigned, float64 floats)."""
    return Expression._call("agg_sum", expr)


def product(expr: Expression) -> Expression:
    """Product of the non-null values of a numeric column (int64 for signed ints, uint64 unsigned,
    float64 floats; integers wrap on overflow as Arrow's kernel does); null for a group without
    non-null values."""
    return Expression._call("agg_product", expr)


def mean(expr: Expression) -> Expression:
    """Arithmetic mean of the non-null values (float64; null for no values)."""
    return Expression._call("agg_mean", expr)


def avg(expr: Expression) -> Expression:
    """Alias of :func:`mean`."""
    return mean(expr)


def stddev(expr: Expression, ddof: int = 1) -> Expression:
    """Standard deviation of the non-null values (float64): sqrt(sum((x - mean)^2) / (n - ddof));
    null where n <= ddof. ``ddof`` defaults to 1 (the sample value), as Daft's."""
    return Expression._call("agg_stddev", expr, ddof=_ddof(ddof))


def var(expr: Expression, ddof: int = 1) -> Expression:
    """Variance of the non-null values of a numeric column (float64):
    sum((x - mean)^2) / (n - ddof), ``ddof`` 1 by default (sample variance, as pandas); null where
    n <= ddof. Raises ValueError for a negative ``ddof``."""
    return Expression._call("agg_var", expr, ddof=_ddof(ddof))


def skew(expr: Expression) -> Expression:
    """Skewness of the non-null values of a numeric column (float64): the population (biased)
    moment ratio m3 / m2^1.5; NaN when all values are equal, null for no values."""
    return Expression._call("agg_skew", expr)


def min(expr: Expression) -> Expression:  # noqa: A001
    """Smallest non-null value (numbers, strings, booleans, dates)."""
    return Expression._call("agg_min", expr)


def max(expr: Expression) -> Expression:  # noqa: A001
    """Largest non-null value (numbers, strings, booleans, dates)."""
    return Expression._call("agg_max", expr)


def bool_and(expr: Expression) -> Expression:
    """True when every non-null value of a boolean column is true, false when one is false, null
    for a group without non-null values."""
    return Expression._call("agg_bool_and", expr)


def bool_or(expr: Expression) -> Expression:
    """True when a non-null value of a boolean column is true, false when all are false, null for
    a group without non-null values."""
    return Expression._call("agg_bool_or", expr)


def any_value(expr: Expression, ignore_nulls: bool = False) -> Expression:
    """Some value of the group; with ``ignore_nulls=True`` a non-null one whenever there is one."""
    return Expression._call("agg_any_value", expr, ignore_nulls=bool(ignore_nulls))


def approx_count_distinct(expr: Expression) -> Expression:
    """Number of distinct non-null values (uint64; computed exactly)."""
    return Expression._call("agg_approx_count_distinct", expr)


def approx_percentiles(expr: Expression, percentiles: float | list[float]) -> Expression:
    """Approximate percentiles of the non-null values of a numeric column (Arrow's t-digest).
    ``percentiles`` a float in [0, 1] gives a float64 column; a list of them a
    ``fixed_size_list<float64, len>`` column. Null for a group without values. Raises ValueError
    for a percentile outside [0, 1] or an empty list."""
    scalar = not isinstance(percentiles, list | tuple)
    values = [percentiles] if scalar else list(percentiles)
    if not values:
        raise ValueError("approx_percentiles needs at least one percentile")
    for p in values:
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 <= float(p) <= 1.0:
            raise ValueError(f"approx_percentiles: percentiles must be between 0 and 1, got {p!r}")
    text = ",".join(repr(float(p)) for p in values)
    return Expression._call("agg_approx_percentiles", expr, percentiles=text, scalar=scalar)


def percentile(expr: Expression, percentage: float) -> Expression:
    """Exact percentile of the non-null (and non-NaN) values of a numeric column (float64), by
    linear interpolation between the closest ranks (pandas' ``quantile`` default); null for a group
    without values. Raises ValueError for a percentage outside [0, 1]."""
    if isinstance(percentage, bool) or not isinstance(percentage, int | float) or math.isnan(percentage):
        raise ValueError(f"percentile: percentage must be a number between 0 and 1, got {percentage!r}")
    if not 0.0 <= float(percentage) <= 1.0:
        raise ValueError(f"percentile: percentage must be between 0 and 1, got {percentage!r}")
    return Expression._call("agg_percentile", expr, percentage=float(percentage))


def median(expr: Expression) -> Expression:
    """Exact median: :func:`percentile` at 0.5 (float64)."""
    return percentile(expr, 0.5)


def list_agg(expr: Expression) -> Expression:
    """All values of the group (nulls included) as a list."""
    return Expression._call("agg_list", expr)


def list_agg_distinct(expr: Expression) -> Expression:
    """The distinct non-null values of the group as a list (``large_list<T>``; order not
    defined). Daft's older name: ``agg_set``."""
    return Expression._call("agg_set", expr)


def string_agg(expr: Expression, delimiter: str | None = None) -> Expression:
    """The group's strings concatenated in row order, ``delimiter`` (default none) between
    them; nulls are skipped, and a group without a non-null string gives null (Daft's values:
    ["x", None, "y"] -> "xy", or "x, y" with ``delimiter=", "``). Raises TypeError for a
    ``delimiter`` that is not a string."""
    if delimiter is not None and not isinstance(delimiter, str):
        raise TypeError(f"string_agg: delimiter must be a string, got {type(delimiter).__name__}")
    if delimiter:
        return Expression._call("agg_concat", expr, delimiter=delimiter)
    return Expression._call("agg_concat", expr)


def _ddof(ddof: int) -> int:
    if isinstance(ddof, bool) or not isinstance(ddof, int) or ddof < 0:
        raise ValueError(f"ddof must be an integer >= 0, got {ddof!r}")
    return _builtin_min(ddof, 2**31 - 1)
