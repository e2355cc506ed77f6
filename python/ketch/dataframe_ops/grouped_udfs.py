"""User code over whole groups: ``GroupedDataFrame.map_groups(udf_call)`` and ``@ketch.udaf``
aggregations (Daft's APIs).

Both are planned as a hash aggregation that gathers each group's input values into lists
(``agg_list``), then a row-wise step over one row per group that hands those values to the user
code as ``Series``. A group's values are therefore held in memory together (as Daft does for
map_groups); the aggregation itself spills like any other."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ketch.datatype import DataType
from ketch.expressions.expression import Expression, col

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame, GroupedDataFrame

_ids = itertools.count()


def _list_value_types(df: DataFrame, names: list[str]) -> list[pa.DataType]:
    schema = df._arrow_schema()
    return [schema.field(n).type.value_type for n in names]


def map_groups(grouped: GroupedDataFrame, udf: Expression) -> DataFrame:
    """One output row per value the UDF returns for each group, after the group's keys; the
    output column is named as the UDF call (its alias, or its first input column)."""
    call = getattr(udf, "_udf_call", None)
    if not isinstance(udf, Expression) or call is None:
        raise ValueError(
            "map_groups expects a UDF call (@ketch.func / @ketch.func.batch / @ketch.cls method), "
            f"got {udf!r}"
        )
    runner, args = call
    tag = next(_ids)
    hidden = [f"__ketch_map_groups_{tag}_{i}" for i in range(len(args))]
    lists = grouped.agg(*[a.agg_list().alias(h) for a, h in zip(args, hidden, strict=True)])
    types = _list_value_types(lists, hidden)
    out_name = udf.name()
    key_names = list(grouped.group_by)

    from ketch.udf.results import _to_arrow_result

    def per_group(*values: list[Any]) -> list[Any]:
        # The user code directly (any number of rows out: not the engine's rows-in = rows-out call).
        arrays = [pa.array(v, type=t) for v, t in zip(values, types, strict=True)]
        raw = runner.invoke(arrays, len(values[0]) if values else 0)
        try:
            produced = len(raw)
        except TypeError:
            produced = 1
        return _to_arrow_result(raw, runner.dtype, produced, runner.name).to_pylist()

    from ketch.udf import func

    wrapped = func(return_dtype=DataType.list(runner.dtype))(per_group)
    applied = lists.select(*key_names, wrapped(*[col(h) for h in hidden]).alias(out_name))
    return applied.explode(out_name)


class UdafCall:
    """What calling a ``@ketch.udaf`` instance gives: marks the aggregation for ``agg``."""


def udaf(
    cls: type | None = None, *, return_dtype: Any, state: Any
) -> Any:  # Daft: (cls=None, *, return_dtype, state)
    """Class decorator for a user-defined aggregation (Daft's ``@daft.udaf``): the class defines
    ``aggregate(*inputs) -> state`` (a group's rows as one Series per input column),
    ``combine(states) -> state`` (associative and commutative) and ``finalize(state) -> value``;
    ``state`` is one DataType (single state) or ``{name: DataType}`` (``aggregate`` returns a dict).
    ``instance(col("x"))`` is an aggregation for ``df.agg`` / ``groupby(...).agg``, named after its
    first input column (``.alias`` renames it). Each group's rows reach ``aggregate`` in one call
    (so ``combine`` sees that one state), and the states' types are checked on the way.
    Raises TypeError when the class lacks one of the three methods."""

    def wrap(klass: type) -> type:
        for method in ("aggregate", "combine", "finalize"):
            if not callable(getattr(klass, method, None)):
                raise TypeError(f"@ketch.udaf class {klass.__name__} must define {method}()")
        out_dtype = DataType._infer(return_dtype)
        states = (
            {k: DataType._infer(v) for k, v in state.items()}
            if isinstance(state, dict)
            else DataType._infer(state)
        )

        def __call__(self: Any, *inputs: Any) -> Expression:
            from ketch.dataframe import _as_expression

            exprs = [_as_expression(e) for e in inputs]
            if not exprs:
                raise ValueError(f"{klass.__name__}(...) needs at least one input column")
            tag = next(_ids)
            marker = col(f"__ketch_udaf_{tag}").alias(exprs[0].name())
            _UDAF_CALLS[f"__ketch_udaf_{tag}"] = (self, exprs, out_dtype, states)
            return marker

        klass.__call__ = __call__  # type: ignore[attr-defined]
        klass._ketch_udaf = True  # type: ignore[attr-defined]
        return klass

    return wrap(cls) if cls is not None else wrap


_UDAF_CALLS: dict[str, tuple[Any, list[Expression], DataType, Any]] = {}


def udaf_markers(exprs: list[Expression]) -> list[str]:
    return [c for e in exprs for c in e._native.columns() if c in _UDAF_CALLS]


def lower_udafs(
    df: DataFrame, keys: list[Expression], key_names: list[str], exprs: list[Expression]
) -> DataFrame | None:
    """``agg`` of ``exprs`` over ``df`` grouped by ``keys`` when some are UDAF calls (None when
    none is): the UDAF inputs are list-aggregated with the other aggregations, then each UDAF
    runs over its group's lists in a row-wise step."""
    if not udaf_markers(exprs):
        return None
    from ketch.series import Series
    from ketch.udf import func

    plain: list[Expression] = []
    hidden_for: dict[str, list[str]] = {}
    order: list[tuple[str, str]] = []  # (output name, "plain" | marker)
    for e in exprs:
        markers = udaf_markers([e])
        if not markers:
            plain.append(e)
            order.append((e.name(), "plain"))
            continue
        marker = markers[0]
        text = repr(e._native)
        if len(markers) > 1 or not (text == f"col({marker})" or text.startswith(f"col({marker}) as ")):
            raise ValueError("a @ketch.udaf call must be an aggregation of its own (aliased at most)")
        _, inputs, _, _ = _UDAF_CALLS[marker]
        hidden = [f"{marker}_{i}" for i in range(len(inputs))]
        hidden_for[marker] = hidden
        plain.extend(a.agg_list().alias(h) for a, h in zip(inputs, hidden, strict=True))
        order.append((e.name(), marker))
    if keys:
        aggregated = df.groupby(*keys).agg(*plain)
    else:
        aggregated = df.agg(*plain)
    outputs: list[Expression] = [col(k) for k in key_names]
    for name, what in order:
        if what == "plain":
            outputs.append(col(name))
            continue
        instance, _, out_dtype, states = _UDAF_CALLS[what]
        hidden = hidden_for[what]
        types = _list_value_types(aggregated, hidden)

        def run(
            *values: list[Any],
            _instance: Any = instance,
            _types: list[pa.DataType] = types,
            _states: Any = states,
        ) -> Any:
            series = [Series.from_arrow(pa.array(v, type=t)) for v, t in zip(values, _types, strict=True)]
            partial = _instance.aggregate(*series)
            if isinstance(_states, dict):
                merged = _instance.combine({k: Series.from_pylist([partial[k]]) for k in _states})
            else:
                merged = _instance.combine(Series.from_pylist([partial]))
            return _instance.finalize(merged)

        outputs.append(func(return_dtype=out_dtype)(run)(*[col(h) for h in hidden]).alias(name))
    return aggregated.select(*outputs)
