"""Python / numpy values → Arrow arrays of Ketch's multimodal types (UDF results)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from ketch.datatype import DataType

_CHANNELS = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}


def _hwc(value: Any) -> np.ndarray:
    array = np.asarray(value)
    if array.ndim == 2:
        array = array[:, :, None]
    if array.ndim != 3 or array.shape[2] not in (1, 2, 3, 4):
        raise ValueError(f"an image must be (H, W) or (H, W, C) with C in 1..4, got shape {array.shape}")
    if array.dtype != np.uint8:
        raise ValueError(f"image pixels must be uint8, got {array.dtype}")
    return np.ascontiguousarray(array)


def images_to_arrow(values: Any, dtype: DataType) -> pa.Array:
    """An Image / FixedShapeImage column from (H, W[, C]) uint8 arrays (None → null), or from one
    (N, H, W, C) array. ValueError for other shapes, dtypes or a mode mismatch."""
    rows = list(values) if not (isinstance(values, np.ndarray) and values.ndim == 4) else list(values)
    ext = dtype.to_arrow()
    mode, height, width = dtype.image_info()
    arrays = [None if v is None else _hwc(v) for v in rows]
    for a in arrays:
        if a is not None and mode is not None and a.shape[2] != _CHANNELS[mode]:
            raise ValueError(f"image with {a.shape[2]} channels in a column of mode {mode}")
    mask = pa.array([a is None for a in arrays])
    if height is not None:
        size = height * width * _CHANNELS[mode]
        block = np.zeros((len(arrays), size), np.uint8)
        for i, a in enumerate(arrays):
            if a is not None:
                if a.shape[:2] != (height, width):
                    raise ValueError(f"image of {a.shape[0]}x{a.shape[1]} in a {height}x{width} column")
                block[i] = a.reshape(-1)
        storage = pa.FixedSizeListArray.from_arrays(pa.array(block.reshape(-1), pa.uint8()), size, mask=mask)
        return pa.ExtensionArray.from_storage(ext, storage.cast(ext.storage_type))
    empty = np.zeros((0, 0, 1), np.uint8)
    fields = [
        pa.array([(a if a is not None else empty).tobytes() for a in arrays], pa.large_binary()),
        pa.array([0 if a is None else a.shape[2] for a in arrays], pa.uint16()),
        pa.array([0 if a is None else a.shape[0] for a in arrays], pa.uint32()),
        pa.array([0 if a is None else a.shape[1] for a in arrays], pa.uint32()),
        pa.array([0 if a is None else a.shape[2] for a in arrays], pa.uint8()),
    ]
    storage = pa.StructArray.from_arrays(fields, fields=list(ext.storage_type), mask=mask)
    return pa.ExtensionArray.from_storage(ext, storage)


def tensors_to_arrow(values: Any, dtype: DataType) -> pa.Array:
    """A FixedShapeTensor column from one (N, *shape) array or N arrays of the tensor's shape."""
    ext = dtype.to_arrow()
    block = np.asarray(
        values if isinstance(values, np.ndarray) else np.stack([np.asarray(v) for v in values])
    )
    block = block.astype(ext.value_type.to_pandas_dtype(), copy=False)
    if tuple(block.shape[1:]) != tuple(ext.shape):
        raise ValueError(f"tensors of shape {block.shape[1:]} in a column of shape {tuple(ext.shape)}")
    return pa.FixedShapeTensorArray.from_numpy_ndarray(np.ascontiguousarray(block))
