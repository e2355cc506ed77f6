"""``Expression.float``: Daft's float namespace; each method calls :mod:`ketch.functions.math`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression


class FloatNamespace:
    def __init__(self, expr: Expression) -> None:
        self._expr = expr

    def is_nan(self) -> Expression:
        """Bool: NaN (null stays null)."""
        from ketch.functions import math

        return math.is_nan(self._expr)

    def is_inf(self) -> Expression:
        """Bool: +-inf (null stays null)."""
        from ketch.functions import math

        return math.is_inf(self._expr)

    def not_nan(self) -> Expression:
        """Bool: not NaN (null stays null)."""
        from ketch.functions import math

        return math.not_nan(self._expr)

    def fill_nan(self, fill_value: Any) -> Expression:
        """NaN replaced by ``fill_value``."""
        from ketch.functions import math

        return math.fill_nan(self._expr, fill_value)
