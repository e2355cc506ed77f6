"""``Expression.map``: lookups in map columns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression


class MapNamespace:
    def __init__(self, expr: Expression) -> None:
        self._expr = expr

    def get(self, key: Any) -> Expression:
        """The value stored under ``key`` (literal or column, cast to the map's key type; the first
        match), null where the key is absent; the map's value type. KetchTypeError at plan time for
        a non-map input or a key that cannot be cast to the key type."""
        from ketch.expressions.expression import Expression

        return Expression._call("map_get", self._expr, key)

    def keys(self) -> Expression:
        """Each map's keys as a list (large_list of the key type), in stored order; null for an
        empty map, as Daft gives."""
        from ketch.expressions.expression import Expression

        return Expression._call("map_keys", self._expr)
