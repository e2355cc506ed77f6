"""A UDF's return value → the Arrow array of its ``return_dtype``: Series, pyarrow and numpy
arrays, lists (Python objects, files, images, tensors converted by their own helpers), checked
for length and cast safely; the errors name the UDF and the batch size."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from ketch import large_arrays
from ketch.datatype import DataType
from ketch.series import Series


def _to_arrow_result(result: Any, dtype: DataType, num_rows: int, name: str) -> pa.Array:
    if dtype.extension_name == "ketch.python" and not isinstance(result, (Series, pa.Array, pa.ChunkedArray)):
        from ketch.pytype import python_array

        values = list(result)
        if len(values) != num_rows:
            raise ValueError(f"UDF '{name}' returned {len(values)} values for a batch of {num_rows} rows")
        return python_array(values)
    if dtype.extension_name == "ketch.file" and not isinstance(result, (Series, pa.Array, pa.ChunkedArray)):
        from ketch.file import files_to_arrow

        values = list(result)
        if len(values) != num_rows:
            raise ValueError(f"UDF '{name}' returned {len(values)} values for a batch of {num_rows} rows")
        return files_to_arrow(values)
    if dtype.is_image() or dtype.is_fixed_shape_image() or dtype.extension_name == "arrow.fixed_shape_tensor":
        if not isinstance(result, (Series, pa.Array, pa.ChunkedArray)):
            from ketch.convert import images_to_arrow, tensors_to_arrow

            values = list(result) if not isinstance(result, np.ndarray) else result
            if len(values) != num_rows:
                raise ValueError(f"UDF '{name}' returned {len(values)} values for a batch of {num_rows} rows")
            if dtype.extension_name == "arrow.fixed_shape_tensor":
                return tensors_to_arrow(values, dtype)
            return images_to_arrow(values, dtype)
    from ketch.tensor_values import is_variable_tensor, variable_tensors_to_arrow

    if is_variable_tensor(dtype.to_arrow()) and not isinstance(result, (Series, pa.Array, pa.ChunkedArray)):
        values = list(result)
        if len(values) != num_rows:
            raise ValueError(f"UDF '{name}' returned {len(values)} values for a batch of {num_rows} rows")
        try:
            return variable_tensors_to_arrow(values, dtype.to_arrow())
        except TypeError as exc:
            raise TypeError(f"UDF '{name}' returned values that are not {dtype!r}: {exc}") from exc
    if isinstance(result, Series):
        array = result.to_arrow()
    elif isinstance(result, pa.ChunkedArray):
        array = large_arrays.combine(result)  # over 2 GiB: as the large variant, cast below
    elif isinstance(result, pa.Array):
        array = result
    elif isinstance(result, np.ndarray) and result.ndim == 1:
        array = pa.array(result)
    elif isinstance(result, (list, tuple, np.ndarray)):
        # Untyped first, then a safe cast below: 1.7 for an int64 UDF is an error, not 1.
        array = large_arrays.from_values(list(result), dtype.to_arrow())
    else:
        raise TypeError(
            f"UDF '{name}' must return a Series, pyarrow array, numpy array or list, "
            f"got {type(result).__name__}"
        )
    if isinstance(array, pa.ChunkedArray):  # pa.array over a numpy array of 2 GiB of bytes
        array = large_arrays.combine(array)
    if len(array) != num_rows:
        raise ValueError(f"UDF '{name}' returned {len(array)} values for a batch of {num_rows} rows")
    if array.type != dtype.to_arrow():
        try:
            array = array.cast(dtype.to_arrow(), safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowCapacityError) as exc:
            too_large = large_arrays.overflow_message(name, array, dtype.to_arrow(), num_rows)
            if too_large is not None:
                raise ValueError(too_large) from exc
            raise TypeError(
                f"UDF '{name}' returned {array.type}, which cannot be cast to its "
                f"return_dtype {dtype!r}: {exc}"
            ) from exc
    return array


def _nulls(dtype: DataType, num_rows: int) -> pa.Array:
    arrow_type = dtype.to_arrow()
    if isinstance(arrow_type, pa.ExtensionType):
        return pa.ExtensionArray.from_storage(arrow_type, pa.nulls(num_rows, arrow_type.storage_type))
    return pa.nulls(num_rows, arrow_type)


def _item_bytes(item: Any) -> int:
    """About what an item weighs once converted (bytes, strings, arrays; 8 for anything else)."""
    if isinstance(item, (bytes, bytearray, str, memoryview)):
        return 8 + len(item)
    nbytes = getattr(item, "nbytes", None)
    return 8 + nbytes if isinstance(nbytes, int) else 8
