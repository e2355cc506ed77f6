"""DataFrames over data already in memory (zero-copy from Arrow)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ketch import _core

if TYPE_CHECKING:
    import pandas

    from ketch.dataframe import DataFrame


def _from_table(table: pa.Table) -> DataFrame:
    """An in-memory DataFrame is materialized from the start (as in Daft): ``repr`` and
    ``show`` print its rows and their total without running a query."""
    from ketch.dataframe import DataFrame

    df = DataFrame(_core.PyPlan.in_memory(table))
    df._result, df._partition_rows = table, [table.num_rows]
    return df


def from_pydict(data: dict[str, Any]) -> DataFrame:
    """A DataFrame from ``{column name: list | numpy array | pyarrow array}``; all columns must have
    the same length (``ValueError`` otherwise)."""
    if not isinstance(data, dict):
        raise TypeError(f"from_pydict takes a dict of columns, got {type(data).__name__}")
    lengths = {name: len(values) for name, values in data.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"from_pydict: columns have different lengths: {lengths}")
    return _from_table(pa.table({name: _column(values) for name, values in data.items()}))


def _column(values: Any) -> pa.Array | pa.ChunkedArray:
    """Arrow's own conversion; objects Arrow cannot represent become a Python column (pickled)."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    from ketch.io.infer_tensors import numpy_tensor_column

    tensors = numpy_tensor_column(values)
    if tensors is not None:
        return tensors
    uuids = _uuid_column(values)
    if uuids is not None:
        return uuids
    numbers = _plain_number_column(values)
    if numbers is not None:
        return numbers
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        from ketch.pytype import python_array

        return python_array(list(values))


def _plain_number_column(values: Any) -> pa.Array | None:
    """A list or tuple whose items are all Python ``int`` (int64), all ``float`` (float64) or all
    ``bool`` (bool), without None, as the Arrow array ``pa.array`` would give, built from a NumPy
    buffer: ``pa.array`` on a Python list imports pandas first (about 0.4 s, once per process),
    which this common case does not need. None for anything else (ints beyond int64 too)."""
    if not isinstance(values, (list, tuple)) or not values:
        return None
    import numpy as np

    kind = type(values[0])
    if kind not in (int, float, bool) or any(type(v) is not kind for v in values):
        return None
    if kind is bool:
        bits = np.packbits(np.asarray(values, dtype=np.bool_), bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])
    try:
        data = np.asarray(values, dtype=np.int64 if kind is int else np.float64)
    except OverflowError:
        return None
    arrow_type = pa.int64() if kind is int else pa.float64()
    return pa.Array.from_buffers(arrow_type, len(values), [None, pa.py_buffer(data)])


def _uuid_column(values: Any) -> pa.Array | None:
    """A column of ``uuid.UUID`` (and None) as Arrow's ``arrow.uuid`` extension type; None when
    the values are anything else."""
    import uuid

    first = next((v for v in values if v is not None), None) if isinstance(values, (list, tuple)) else None
    if not isinstance(first, uuid.UUID):
        return None
    if not all(v is None or isinstance(v, uuid.UUID) for v in values):
        return None
    return pa.array([None if v is None else v.bytes for v in values], type=pa.uuid())


def from_arrow(data: pa.Table | pa.RecordBatch | list[pa.Table] | Any) -> DataFrame:
    """A DataFrame over a pyarrow Table, RecordBatch, list of tables, or any object exposing
    ``__arrow_c_stream__``; no data is copied."""
    if isinstance(data, list):
        data = pa.concat_tables(data)
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if not hasattr(data, "__arrow_c_stream__"):
        raise TypeError(f"from_arrow takes Arrow data, got {type(data).__name__}")
    return _from_table(data)


def from_pandas(df: pandas.DataFrame) -> DataFrame:
    """A DataFrame from a pandas DataFrame (via ``pyarrow.Table.from_pandas``, index dropped)."""
    return _from_table(pa.Table.from_pandas(df, preserve_index=False))
