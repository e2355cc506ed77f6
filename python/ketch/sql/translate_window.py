"""``f(...) OVER (PARTITION BY .. ORDER BY .. ROWS|RANGE BETWEEN ..)`` → ``expr.over(Window)``,
written against Daft's window API (``ketch.Window``: ``partition_by``, ``order_by(desc=)``,
``rows_between``, ``range_between``, ``Window.unbounded_preceding`` / ``unbounded_following`` /
``current_row``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp

from ketch.expressions.expression import Expression
from ketch.sql.errors import InvalidSQLException
from ketch.sql.functions import literal_int

if TYPE_CHECKING:
    from ketch.sql.translate_expr import ExprTranslator


def _window_class() -> Any:
    try:
        from ketch.window import Window
    except ImportError:
        raise InvalidSQLException(
            "Unsupported SQL: window functions (OVER) need ketch.Window, which this build lacks"
        ) from None
    return Window


def _boundary(window_class: Any, value: Any, side: str | None, node: exp.Expression) -> Any:
    text = str(value.name if isinstance(value, exp.Expression) else value).upper()
    side = (side or "").upper()
    if text == "UNBOUNDED":
        return window_class.unbounded_preceding if side == "PRECEDING" else window_class.unbounded_following
    if text == "CURRENT ROW":
        return window_class.current_row
    offset = literal_int(value, "window frame bound", node)
    return -offset if side == "PRECEDING" else offset


def translate_window(node: exp.Window, translator: ExprTranslator) -> Expression:
    """The windowed expression of ``node``. Raises InvalidSQLException for named windows,
    IGNORE NULLS, FILTER, or a build without ketch.Window."""
    window_class = _window_class()
    func = node.this
    if isinstance(func, exp.IgnoreNulls | exp.RespectNulls | exp.Filter):
        raise InvalidSQLException(f"Unsupported SQL: '{func.sql()}' in a window function")
    if node.args.get("alias") is not None:
        raise InvalidSQLException(f"Unsupported SQL: named window '{node.alias}'")
    translator._in_window = True  # type: ignore[attr-defined]
    try:
        inner = translator.translate(func)
    finally:
        translator._in_window = False  # type: ignore[attr-defined]
    window = window_class()
    partition = [translator.translate(p) for p in node.args.get("partition_by") or []]
    if partition:
        window = window.partition_by(*partition)
    order = node.args.get("order")
    if order is not None:
        keys = [translator.translate(o.this) for o in order.expressions]
        desc = [bool(o.args.get("desc")) for o in order.expressions]
        nulls = [bool(o.args.get("nulls_first")) for o in order.expressions]
        if nulls != desc:  # not Daft's default (nulls last ascending, first descending)
            try:
                window = window.order_by(*keys, desc=desc, nulls_first=nulls)
            except TypeError:
                raise InvalidSQLException(
                    f"Unsupported SQL: NULLS FIRST/LAST other than the default in '{order.sql()}' "
                    "(Window.order_by takes no nulls_first in this build)"
                ) from None
        else:
            window = window.order_by(*keys, desc=desc)
    spec = node.args.get("spec")
    if spec is not None:
        kind = str(spec.args.get("kind") or "ROWS").upper()
        start = _boundary(window_class, spec.args.get("start"), spec.args.get("start_side"), spec)
        end_node = spec.args.get("end")
        end = (
            window_class.current_row
            if end_node is None
            else _boundary(window_class, end_node, spec.args.get("end_side"), spec)
        )
        if kind == "ROWS":
            window = window.rows_between(start, end)
        elif kind == "RANGE":
            window = window.range_between(start, end)
        else:
            raise InvalidSQLException(f"Unsupported SQL: window frame kind {kind} in '{spec.sql()}'")
    return inner.over(window)
