"""``Expression.embedding``: native kernels over Embedding (fixed-size list) columns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from ketch.expressions.expression import Expression


class EmbeddingNamespace:
    def __init__(self, expr: Expression) -> None:
        self._expr = expr

    def cosine_distance(self, other: Any) -> Expression:
        """1 - a·b / (|a| |b|) per row (float64), computed natively in float64. ``other`` is an
        Embedding column or one vector (list / numpy array) for every row. Null where either side
        is null or has zero norm. Errors: non-list inputs fail at plan time (``KetchTypeError``);
        rows of different lengths raise ``KetchValueError`` naming the row."""
        from ketch.expressions.expression import Expression, lit

        if not isinstance(other, Expression):
            values = [float(v) for v in other]
            other = lit(pa.scalar(values, pa.list_(pa.float64(), len(values))))
        return Expression._call("embedding_cosine_distance", self._expr, other)
