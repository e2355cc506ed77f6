"""Top-level constructors Daft has: ``ketch.from_pylist`` and ``ketch.range``."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame


def from_pylist(data: list[dict[str, Any]]) -> DataFrame:
    """A DataFrame from a list of row dicts ``[{column: value, ...}, ...]``, as Daft builds it:
    the columns are every key seen in any row, sorted by name; a row without a key gives null
    there. Values convert as in ``from_pydict`` (Arrow's inference; objects Arrow cannot hold
    become a Python column). An empty list gives a DataFrame without columns or rows.
    Raises TypeError unless ``data`` is a list, ValueError for a row that is not a dict (Daft's
    class)."""
    from ketch.io import from_pydict

    if not isinstance(data, list):
        raise TypeError(f"from_pylist takes a list of dicts, got {type(data).__name__}")
    names: set[str] = set()
    for i, row in enumerate(data):
        if not isinstance(row, dict):
            raise ValueError(
                "from_pylist: expected a list of dicts {column_name: value}, "
                f"row {i} is a {type(row).__name__}"
            )
        names.update(row)
    return from_pydict({name: [row.get(name) for row in data] for name in sorted(names)})


def range(start: int, end: int | None = None, step: int = 1, partitions: int | None = 1) -> DataFrame:  # noqa: A001
    """A DataFrame with one int64 column ``id``: ``start, start + step, ...`` up to ``end``
    (exclusive), as Python's ``range``; ``range(n)`` counts from 0 to n - 1. The rows are split
    into ``partitions`` partitions of nearly equal size, in order. The values are built in memory
    (8 bytes per row). ``partitions=None`` means one partition (Daft's default is 1).

    Raises ValueError for ``step == 0`` or ``partitions < 1``, TypeError for a non-int argument."""
    from ketch import _core
    from ketch.dataframe import DataFrame

    if end is None:
        start, end = 0, start
    if partitions is None:
        partitions = 1
    for name, value in (("start", start), ("end", end), ("step", step), ("partitions", partitions)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"range(): {name} must be an int, got {value!r}")
    if step == 0:
        raise ValueError("range(): step must not be zero")
    if partitions < 1:
        raise ValueError(f"range(): partitions must be >= 1, got {partitions}")
    import numpy as np

    values = np.arange(start, end, step, dtype=np.int64)
    table = pa.table({"id": pa.array(values, pa.int64())})
    n = len(values)
    sizes = [n // partitions + (1 if i < n % partitions else 0) for i in builtins.range(partitions)]
    df = DataFrame(_core.PyPlan.in_memory(table, sizes))
    return df
