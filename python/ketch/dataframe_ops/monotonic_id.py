"""monotonically_increasing_id() for select / with_column(s): the ids of the rows that reach the
projection, ``partition << 36 | row within the partition`` (Daft's layout).

The expression is a reference to the hidden column ``ID_COLUMN``; a projection that reads it runs
the query below it (on the current runner, keeping its partitions), appends the ids per partition
and projects over that result. Unlike Daft's MonotonicallyIncreasingId plan node this is not lazy:
the query up to the projection runs when select / with_column(s) is called."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ketch import _core

if TYPE_CHECKING:
    from ketch.dataframe import DataFrame

ID_COLUMN = "__ketch_monotonic_id"
ROW_BITS = 36
MAX_PARTITIONS = 1 << 28


def reads_ids(natives: list[Any], df: DataFrame) -> bool:
    """Whether the projection ``natives`` (PyExpr) reads the id column ``df`` does not have."""
    if ID_COLUMN in df.column_names:
        return False
    return any(ID_COLUMN in native.columns() for native in natives)


def plan_with_ids(df: DataFrame) -> Any:
    """Runs ``df``'s query; an in-memory plan of its result, partitions kept, with the ids appended
    as the uint64 column ``ID_COLUMN``. ValueError beyond 2^28 partitions or 2^36 rows in one."""
    table, partition_rows = df._execute_partitioned(df._plan)
    rows = partition_rows or [table.num_rows]
    if len(rows) > MAX_PARTITIONS:
        raise ValueError(f"monotonically_increasing_id: {len(rows)} partitions do not fit in 28 bits")
    if rows and max(rows) >= 1 << ROW_BITS:
        raise ValueError("monotonically_increasing_id: a partition has more than 2^36 rows")
    ids = np.empty(sum(rows), dtype=np.uint64)
    start = 0
    for partition, n in enumerate(rows):
        ids[start : start + n] = np.arange(n, dtype=np.uint64) + np.uint64(partition << ROW_BITS)
        start += n
    table = table.append_column(pa.field(ID_COLUMN, pa.uint64(), nullable=False), pa.array(ids, pa.uint64()))
    return _core.PyPlan.in_memory(table, rows)
