"""Inference of tensor columns from Python lists of numpy arrays (``from_pydict``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from ketch.datatype import DataType


def numpy_tensor_column(values: Any) -> pa.Array | None:
    """A variable-shape ``DataType.tensor(dtype)`` column when every non-null value of the list
    ``values`` is a numpy array of one numeric or boolean dtype (Daft's inference); None otherwise.
    Each row stores its flattened data (row-major) and its shape."""
    if not isinstance(values, list | tuple):
        return None
    arrays = [v for v in values if v is not None]
    if not arrays or not all(isinstance(v, np.ndarray) for v in arrays):
        return None
    dtypes = {v.dtype for v in arrays}
    if len(dtypes) != 1:
        return None
    value_type = pa.from_numpy_dtype(dtypes.pop())
    if not (
        pa.types.is_integer(value_type) or pa.types.is_floating(value_type) or pa.types.is_boolean(value_type)
    ):
        return None
    tensor = DataType.tensor(value_type).to_arrow()
    data = pa.array([None if v is None else np.ravel(v) for v in values], type=pa.large_list(value_type))
    shape = pa.array([None if v is None else list(v.shape) for v in values], type=pa.large_list(pa.uint64()))
    mask = pa.array([v is None for v in values])
    return pa.StructArray.from_arrays([data, shape], fields=list(tensor), mask=mask)
