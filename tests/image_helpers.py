"""Image test data built without Ketch's decoder: an ``Image[mode]`` extension array assembled
from (H, W, C) numpy arrays through the documented Arrow storage (a struct of data, channel,
height, width, mode)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

import ketch


def image_column(arrays: list[np.ndarray | None], mode: str) -> pa.ExtensionArray:
    """A Ketch ``Image[mode]`` column holding ``arrays`` (uint8, (H, W) or (H, W, C); None is a null
    image), built directly from the Arrow extension storage so kernels, Series and IPC can be tested
    without going through decode. The storage's mode code is the channel count, as for L, LA, RGB
    and RGBA."""
    ext_type = ketch.DataType.image(mode).to_arrow()
    data, channel, height, width, modes, valid = [], [], [], [], [], []
    for a in arrays:
        valid.append(a is not None)
        if a is None:
            data.append(b""), channel.append(0), height.append(0), width.append(0), modes.append(0)
            continue
        a = np.ascontiguousarray(a.reshape(a.shape[0], a.shape[1], -1))
        data.append(a.tobytes())
        channel.append(a.shape[2])
        height.append(a.shape[0])
        width.append(a.shape[1])
        modes.append(a.shape[2])
    storage = pa.StructArray.from_arrays(
        [
            pa.array(data, pa.large_binary()),
            pa.array(channel, pa.uint16()),
            pa.array(height, pa.uint32()),
            pa.array(width, pa.uint32()),
            pa.array(modes, pa.uint8()),
        ],
        fields=list(ext_type.storage_type),
        mask=pa.array([not v for v in valid]),
    )
    return pa.ExtensionArray.from_storage(ext_type, storage)
