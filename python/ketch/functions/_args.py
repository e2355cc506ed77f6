"""Argument checks shared by the free functions: constant arguments Ketch takes as literals."""

from __future__ import annotations

from typing import Any

from ketch.errors import KetchNotImplementedError


def literal_str(value: Any, what: str, function: str) -> str:
    """``value`` as a str; raises for an Expression (per-row values) or another type."""
    if isinstance(value, str):
        return value
    from ketch.expressions.expression import Expression

    if isinstance(value, Expression) and value.is_literal() and isinstance(value.as_py(), str):
        return str(value.as_py())  # lit("x") (SQL passes constants so)
    if isinstance(value, Expression):
        raise KetchNotImplementedError(
            f"{function}: {what} must be a str literal; per-row values from an expression ({value!r}) "
            "are not supported yet"
        )
    raise TypeError(f"{function}: {what} must be a str, got {type(value).__name__} {value!r}")


def literal_int(value: Any, what: str, function: str) -> int:
    """``value`` as an int; raises for an Expression (per-row values) or another type."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    from ketch.expressions.expression import Expression

    if isinstance(value, Expression) and value.is_literal():
        constant = value.as_py()  # lit(2) (SQL passes constants so)
        if isinstance(constant, int) and not isinstance(constant, bool):
            return constant
    if isinstance(value, Expression):
        raise KetchNotImplementedError(
            f"{function}: {what} must be an int literal; per-row values from an expression ({value!r}) "
            "are not supported yet"
        )
    raise TypeError(f"{function}: {what} must be an int, got {type(value).__name__} {value!r}")


def option_call(
    function: str, expr: Any, option: str, value: Any, what: str, name: str, kind: type, **others: Any
) -> Any:
    """``function(expr; option=value, **others)``: a str/int ``value`` (``kind``) becomes the call's
    constant option; an Expression gives each row its own value through the native
    ``per_row_option`` (rows grouped by value, one call per distinct value; a null value gives null)."""
    from ketch.expressions.expression import Expression

    if isinstance(value, Expression):
        for key, other in others.items():
            if isinstance(other, Expression):
                raise KetchNotImplementedError(
                    f"{name}: only one of {what} and {key} may be an expression (a per-row column); "
                    f"got {value!r} and {other!r}"
                )
        from ketch import _core
        from ketch.expressions.expression import _expr, _to_arrow_literal

        # _core.call directly: Expression._call's own first parameter is named `function`.
        options = {"function": function, "option": option, "label": name, "argument": what}
        options.update({k: _to_arrow_literal(v) for k, v in others.items()})
        return Expression(_core.call("per_row_option", [_expr(expr)._native, value._native], options))
    checked = literal_str(value, what, name) if kind is str else literal_int(value, what, name)
    return Expression._call(function, expr, **{option: checked}, **others)
