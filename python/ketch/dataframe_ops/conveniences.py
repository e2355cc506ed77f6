"""Daft's small DataFrame conveniences: ``columns``, ``with_column_renamed(s)``, ``pipe``,
``transform``, ``shuffle``, ``to_arrow_iter``, ``__iter__`` and ``__contains__``. Mixed into
``DataFrame``; each is built from the DataFrame's own operations."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from ketch.expressions.expression import Expression, col

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame

T = TypeVar("T")


class DataFrameConveniences:
    """Methods over the host's ``column_names``, ``select``, ``iter_rows`` and its result stream."""

    @property
    def columns(self) -> list[Expression]:
        """The DataFrame's columns as ``col(name)`` expressions, in schema order."""
        return [col(n) for n in self.column_names]  # type: ignore[attr-defined]

    def __contains__(self, col_name: str) -> bool:
        """Whether ``col_name`` is a column of this DataFrame."""
        return col_name in self.column_names  # type: ignore[attr-defined]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Rows as dicts ``{column: value}``: ``iter_rows()`` with default arguments."""
        return self.iter_rows(results_buffer_size=None)  # type: ignore[attr-defined,no-any-return]

    def __arrow_c_schema__(self) -> Any:
        """The Arrow PyCapsule schema of the output (no query runs)."""
        return self._arrow_schema().__arrow_c_schema__()  # type: ignore[attr-defined]

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The result as an Arrow PyCapsule stream (runs the query, like ``to_arrow``), so
        ``pa.table(df)`` and other Arrow consumers read a DataFrame directly."""
        return self.to_arrow().__arrow_c_stream__(requested_schema)  # type: ignore[attr-defined]

    def with_column_renamed(self, existing: str, new: str) -> DataFrame:
        """The DataFrame with column ``existing`` renamed to ``new`` (a no-op when there is no
        such column). Raises KetchValueError when ``new`` names another existing column."""
        return self.with_columns_renamed({existing: new})

    def with_columns_renamed(self, cols_map: dict[str, str]) -> DataFrame:
        """The DataFrame with columns renamed per ``{existing: new}``; names not in the schema
        are ignored. Raises KetchValueError when two output columns would share a name."""
        names = self.column_names  # type: ignore[attr-defined]
        return self.select(  # type: ignore[attr-defined,no-any-return]
            *[col(n).alias(cols_map[n]) if n in cols_map else col(n) for n in names]
        )

    def pipe(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``function(self, *args, **kwargs)``."""
        return function(self, *args, **kwargs)

    def transform(self, func: Callable[..., DataFrame], *args: Any, **kwargs: Any) -> DataFrame:
        """``func(self, *args, **kwargs)``, which must return a DataFrame (TypeError otherwise)."""
        from ketch.dataframe import DataFrame

        result = func(self, *args, **kwargs)
        if not isinstance(result, DataFrame):
            raise TypeError(f"transform(): the function must return a DataFrame, got {type(result).__name__}")
        return result

    def shuffle(self, seed: int | None = None) -> DataFrame:
        """Every row, in a random order (lazy): a global sort on ``random_int`` keys, as Daft does.

        The same ``seed`` over the same input layout gives the same order (Daft's "best-effort
        reproducibility on a fixed partition layout"); without one, a seed is drawn when this is
        called. Like any sort it is a blocking, spillable operation (a range-partitioned sort on
        Ray); for rows spread randomly over partitions without a global order use
        ``repartition(n)``. Raises ValueError when ``seed`` is not an int or None."""
        from ketch.functions.random_values import random_int

        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise ValueError(f"shuffle(): seed must be an int or None, got {seed!r}")
        return self.sort(random_int(-(2**63), 2**63 - 1, seed))  # type: ignore[attr-defined,no-any-return]

    def to_arrow_iter(self, results_buffer_size: int | str | None = "num_cpus") -> Iterator[pa.RecordBatch]:
        """The result as pyarrow RecordBatches, streamed while the query runs (stopping early
        cancels it). ``results_buffer_size`` is accepted for Daft compatibility."""
        del results_buffer_size
        result = self._result  # type: ignore[attr-defined]
        if result is not None:
            yield from result.to_batches()
            return
        for _partitions, reader in self._stream():  # type: ignore[attr-defined]
            yield from reader
