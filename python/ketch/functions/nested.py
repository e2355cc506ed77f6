"""Daft's list, map and struct free functions (``from ketch.functions import list_sum, map_get, ...``):
each is the ``Expression.list`` / ``.map`` / ``.struct`` method it names."""

from __future__ import annotations

from typing import Any

from ketch.expressions.expression import Expression, _expr


def value_counts(list_expr: Expression) -> Expression:
    """See :meth:`ListNamespace.value_counts`."""
    return _expr(list_expr).list.value_counts()


def chunk(list_expr: Expression, size: int) -> Expression:
    """See :meth:`ListNamespace.chunk`."""
    return _expr(list_expr).list.chunk(size)


def list_join(list_expr: Expression, delimiter: Any) -> Expression:
    """See :meth:`ListNamespace.join`."""
    return _expr(list_expr).list.join(delimiter)


def list_count(list_expr: Expression, mode: Any = "valid") -> Expression:
    """See :meth:`ListNamespace.count`."""
    return _expr(list_expr).list.count(mode)


def list_sum(list_expr: Expression) -> Expression:
    """See :meth:`ListNamespace.sum`."""
    return _expr(list_expr).list.sum()


def list_mean(list_expr: Expression) -> Expression:
    """See :meth:`ListNamespace.mean`."""
    return _expr(list_expr).list.mean()


def list_min(list_expr: Expression) -> Expression:
    """See :meth:`ListNamespace.min`."""
    return _expr(list_expr).list.min()


def list_max(list_expr: Expression) -> Expression:
    """See :meth:`ListNamespace.max`."""
    return _expr(list_expr).list.max()


def list_bool_and(list_expr: Expression) -> Expression:
    """See :meth:`ListNamespace.bool_and`."""
    return _expr(list_expr).list.bool_and()


def list_bool_or(list_expr: Expression) -> Expression:
    """See :meth:`ListNamespace.bool_or`."""
    return _expr(list_expr).list.bool_or()


def list_sort(list_expr: Expression, desc: bool | None = None, nulls_first: bool | None = None) -> Expression:
    """See :meth:`ListNamespace.sort`."""
    return _expr(list_expr).list.sort(desc, nulls_first)


def list_distinct(list_expr: Expression) -> Expression:
    """See :meth:`ListNamespace.distinct`."""
    return _expr(list_expr).list.distinct()


def list_contains(list_expr: Expression, item: Any) -> Expression:
    """See :meth:`ListNamespace.contains`."""
    return _expr(list_expr).list.contains(item)


def explode(list_expr: Expression) -> Expression:
    """See :meth:`Expression.explode`."""
    return _expr(list_expr).explode()


def slice(expr: Expression, start: Any, end: Any = None) -> Expression:
    """See :meth:`ListNamespace.slice`."""
    return _expr(expr).list.slice(start, end)


def list_append(list_expr: Expression, other: Any) -> Expression:
    """See :meth:`ListNamespace.append`."""
    return _expr(list_expr).list.append(other)


def list_flatten(list_expr: Expression) -> Expression:
    """See :meth:`ListNamespace.flatten`."""
    return _expr(list_expr).list.flatten()


def to_list(*items: Any) -> Expression:
    """One list per row holding ``items`` (expressions or literals, cast to the first non-null
    item's type): large_list. ValueError without items."""
    if not items:
        raise ValueError("to_list needs at least one item")
    return Expression._call("to_list", *items)


def list_map(list_expr: Expression, mapper: Expression) -> Expression:
    """See :meth:`ListNamespace.map` (``mapper`` reads :func:`ketch.element`)."""
    return _expr(list_expr).list.map(mapper)


def list_filter(list_expr: Expression, predicate: Expression) -> Expression:
    """See :meth:`ListNamespace.filter` (``predicate`` reads :func:`ketch.element`)."""
    return _expr(list_expr).list.filter(predicate)


def unnest(expr: Expression) -> Expression:
    """The fields of the struct ``expr`` as columns of their own (Daft's ``expr.get("*")``):
    ``df.select(unnest(col("s")))`` gives one column per field, named as the field. Only ``select``
    expands it; KetchTypeError there when ``expr`` is not a struct."""
    source = _expr(expr)
    marker = source.alias(source.name())
    marker._unnest_source = source  # type: ignore[attr-defined]
    return marker


def unnest_source(expr: Expression) -> Expression | None:
    """The struct expression ``expr`` unnests (see :func:`unnest`), or None."""
    return getattr(expr, "_unnest_source", None)


def map_keys(expr: Expression) -> Expression:
    """See :meth:`MapNamespace.keys`."""
    return _expr(expr).map.keys()


def map_get(expr: Expression, key: Any) -> Expression:
    """See :meth:`MapNamespace.get`."""
    return _expr(expr).map.get(key)


__all__ = [
    "seq",
    "to_struct",
    "chunk",
    "explode",
    "list_append",
    "list_bool_and",
    "list_bool_or",
    "list_contains",
    "list_count",
    "list_distinct",
    "list_filter",
    "list_flatten",
    "list_join",
    "list_map",
    "list_max",
    "list_mean",
    "list_min",
    "list_sort",
    "list_sum",
    "map_get",
    "map_keys",
    "slice",
    "to_list",
    "unnest",
    "value_counts",
]


def seq(n: Any) -> Expression:
    """Daft's ``seq``: per row, the list ``[0, 1, ..., n-1]`` (List[UInt64]); a null ``n`` gives
    null, 0 an empty list. ``n`` must be an integer column or literal (KetchTypeError at plan
    time otherwise); a negative ``n`` fails the query naming the value (Daft's ValueError)."""
    return Expression._call("list_seq", _expr(n))


def to_struct(*fields: Any, **named_fields: Any) -> Expression:
    """Daft's ``to_struct``: one struct per row whose fields are ``fields`` (each named as its
    expression) and ``named_fields`` (named by the keyword), in that order: Struct[...] of their
    types. A name given twice keeps one field (the later value), as Daft. ValueError without
    fields. ``df.select(to_struct(col("a"), b2=col("b") * 2))`` has the column ``struct``."""
    exprs = [_expr(f) for f in fields] + [_expr(v).alias(k) for k, v in named_fields.items()]
    if not exprs:
        raise ValueError("Cannot call struct with no inputs")
    return Expression._call("to_struct", *exprs, names=[e.name() for e in exprs]).alias("struct")
