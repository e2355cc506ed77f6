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
        return self._distance("embedding_cosine_distance", other)

    def euclidean_distance(self, other: Any) -> Expression:
        """sqrt(sum((a - b)^2)) per row (float64): the L2 distance (not squared), computed natively
        in float64. ``other`` as for ``cosine_distance``. Null where either side or an element is
        null. Errors as for ``cosine_distance``."""
        return self._distance("embedding_euclidean_distance", other)

    def dot_product(self, other: Any) -> Expression:
        """sum(a * b) per row (float64), computed natively in float64; ``other`` as for
        ``cosine_distance``. Null where either side or an element is null."""
        return self._distance("embedding_dot_product", other)

    def pearson_correlation(self, other: Any) -> Expression:
        """Pearson's r between the two vectors of each row (float64): sum(dx dy) / sqrt(sum(dx^2)
        sum(dy^2)) with dx = a - mean(a), two-pass in float64; ``other`` as for
        ``cosine_distance``. Null where either side or an element is null, a side is constant
        (zero variance) or the vectors are empty."""
        return self._distance("embedding_pearson_correlation", other)

    def l2_distance(self, other: Any) -> Expression:
        """Alias of ``euclidean_distance`` (Daft's name); the metric Lance calls ``"l2"``."""
        return self.euclidean_distance(other)

    def _distance(self, function: str, other: Any) -> Expression:
        from ketch.expressions.expression import Expression, lit

        if not isinstance(other, Expression):
            values = [float(v) for v in other]
            other = lit(pa.scalar(values, pa.list_(pa.float64(), len(values))))
        return Expression._call(function, self._expr, other)
