"""``Expression.struct``: field access on struct columns."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression


class StructNamespace:
    def __init__(self, expr: Expression) -> None:
        self._expr = expr

    def get(self, name: str) -> Expression:
        """The field ``name`` of each struct (null where the struct is null), output column named
        ``name``. KetchValueError at plan time listing the fields when there is none so named."""
        from ketch.expressions.expression import Expression

        if not isinstance(name, str):
            raise TypeError(f"struct.get takes a field name (str), got {type(name).__name__}")
        return Expression._call("struct_field_get", self._expr, name=name).alias(name)
