"""Execution helpers that run outside the native engine: the UDF worker processes."""
