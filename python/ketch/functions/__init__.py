"""Free functions over expressions, as ``daft.functions`` (one module per family)."""

from ketch.functions.window import dense_rank, first_value, lag, last_value, lead, over, rank, row_number

__all__ = ["dense_rank", "first_value", "lag", "last_value", "lead", "over", "rank", "row_number"]
