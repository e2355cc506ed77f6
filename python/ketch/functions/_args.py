"""Argument checks shared by the free functions: constant arguments Ketch takes as literals."""

from __future__ import annotations

from typing import Any

from ketch.errors import KetchNotImplementedError


def literal_str(value: Any, what: str, function: str) -> str:
    """``value`` as a str; raises for an Expression (per-row values) or another type."""
    if isinstance(value, str):
        return value
    from ketch.expressions.expression import Expression

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

    if isinstance(value, Expression):
        raise KetchNotImplementedError(
            f"{function}: {what} must be an int literal; per-row values from an expression ({value!r}) "
            "are not supported yet"
        )
    raise TypeError(f"{function}: {what} must be an int, got {type(value).__name__} {value!r}")
