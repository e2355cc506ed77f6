"""Tensor columns <-> numpy: rows of a FixedShapeTensor / variable-shape Tensor column as numpy
arrays of their shapes, and numpy arrays (one per row) into a variable-shape Tensor column."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from ketch.datatype_names import _is_variable_tensor


def is_variable_tensor(arrow_type: pa.DataType) -> bool:
    """True for Ketch's variable-shape tensor layout, struct<data: list<T>, shape: list<uint64>>."""
    return _is_variable_tensor(arrow_type)


def tensor_rows(array: pa.Array) -> list[Any] | None:
    """Rows of a tensor column as numpy arrays of their shapes (None for nulls), or None when
    ``array`` is not a tensor column. FixedShapeTensor rows are read-only views of the column."""
    arrow_type = array.type
    if getattr(arrow_type, "extension_name", None) == "arrow.fixed_shape_tensor":
        shape = tuple(arrow_type.shape)
        valid = array.is_valid().to_pylist()
        if all(valid):
            block = array.to_numpy_ndarray()
            return list(block)
        # Nulls: the storage's slots are there (fixed-size list), so read them and mask.
        values = array.storage.flatten().to_numpy(zero_copy_only=False)
        size = int(np.prod(shape))
        out: list[Any] = []
        offset = 0
        for ok in valid:
            out.append(values[offset : offset + size].reshape(shape) if ok else None)
            offset += size if ok else 0
        return out
    if is_variable_tensor(arrow_type):
        # The data lists' values as one numpy block, each row a slice of it by the list offsets
        # (copied, so that rows are writable as before): no Python float per element.
        data, shapes = array.flatten()  # adjusted for the struct's offset, parent nulls merged
        value_type = arrow_type.field(0).type.value_type.to_pandas_dtype()
        values = data.values.to_numpy(zero_copy_only=False).astype(value_type, copy=False)
        offsets = data.offsets.to_numpy()
        valid = array.is_valid().to_numpy(zero_copy_only=False)
        valid &= data.is_valid().to_numpy(zero_copy_only=False)
        out = []
        for i, shape in enumerate(shapes.to_pylist()):
            if not valid[i] or shape is None:
                out.append(None)
                continue
            out.append(values[offsets[i] : offsets[i + 1]].reshape([int(d) for d in shape]).copy())
        return out
    return None


def variable_tensors_to_arrow(values: Any, arrow_type: pa.StructType) -> pa.Array:
    """A variable-shape Tensor column of ``arrow_type`` from one value per row: numpy arrays
    (or nested lists, or scalars) of any shape, or None for null. Raises TypeError naming the
    row whose value cannot be converted to the tensor's element type."""
    value_type = arrow_type.field(0).type.value_type
    data: list[Any] = []
    shapes: list[Any] = []
    mask: list[bool] = []
    for i, value in enumerate(values):
        if value is None:
            data.append(None)
            shapes.append(None)
            mask.append(True)
            continue
        try:
            block = np.asarray(value, dtype=value_type.to_pandas_dtype())
        except (TypeError, ValueError) as exc:
            kind = type(value).__name__
            raise TypeError(f"row {i}: {kind} is not a tensor of {value_type}: {exc}") from exc
        data.append(block.reshape(-1))
        shapes.append(list(block.shape))
        mask.append(False)
    data_array = pa.array(data, type=arrow_type.field(0).type)
    shape_array = pa.array(shapes, type=arrow_type.field(1).type)
    return pa.StructArray.from_arrays(
        [data_array, shape_array], fields=list(arrow_type), mask=pa.array(mask, type=pa.bool_())
    )
