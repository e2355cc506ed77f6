"""Expressions: typed, lazily evaluated column computations that become native plan nodes."""

from ketch.expressions.expression import Expression, col, element, lit

__all__ = ["Expression", "col", "element", "lit"]
