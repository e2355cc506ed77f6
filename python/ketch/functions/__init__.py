"""Daft's ``daft.functions``: free functions that build expressions (one implementation behind
both spellings, ``count_distinct(col("x"))`` and ``col("x").count_distinct()``)."""

from __future__ import annotations

from ketch.functions.aggregation import *  # noqa: F403
from ketch.functions.aggregation import __all__ as _aggregation_all

__all__ = [*_aggregation_all]
