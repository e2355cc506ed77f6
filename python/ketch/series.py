"""Series: one column of values, as UDFs receive it. Backed by a pyarrow array (no copy)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from ketch import large_arrays
from ketch.datatype import DataType


def _image_rows(array: pa.Array) -> list[np.ndarray | None]:
    """Rows of an Image / FixedShapeImage array as (H, W, C) uint8 numpy arrays (views, no copy)."""
    dtype = DataType(array.type)
    storage = array.storage
    if dtype.is_fixed_shape_image():
        block = fixed_shape_image_block(array)
        valid = storage.is_valid().to_numpy(zero_copy_only=False)
        return [block[i] if valid[i] else None for i in range(len(array))]
    data, channel, height, width = (storage.field(i) for i in range(4))
    valid = storage.is_valid().to_numpy(zero_copy_only=False)
    offsets = np.frombuffer(data.buffers()[1], dtype=np.int64)[data.offset : data.offset + len(data) + 1]
    values = data.buffers()[2]
    flat = np.frombuffer(values, dtype=np.uint8) if values is not None else np.empty(0, np.uint8)
    c, h, w = (x.to_numpy(zero_copy_only=False) for x in (channel, height, width))
    out: list[np.ndarray | None] = []
    for i in range(len(array)):
        if not valid[i]:
            out.append(None)
            continue
        out.append(flat[offsets[i] : offsets[i + 1]].reshape(int(h[i]), int(w[i]), int(c[i])))
    return out


def fixed_shape_image_block(array: pa.Array) -> np.ndarray:
    """The (N, H, W, C) uint8 block behind a FixedShapeImage array, without copying."""
    mode, height, width = DataType(array.type).image_info()
    channels = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}[mode]
    storage = array.storage
    row = height * width * channels
    child = storage.values  # the whole child array: pyarrow's .values ignores the list's own offset
    start = child.offset + storage.offset * row
    flat = np.frombuffer(child.buffers()[1], dtype=np.uint8)[start : start + len(storage) * row]
    return flat.reshape(len(storage), height, width, channels)


def to_pylist(array: pa.Array | pa.ChunkedArray) -> list[Any]:
    """Python values of a column; images become numpy (H, W, C) uint8 arrays, tensors (fixed or
    variable shape) numpy arrays of their shapes."""
    if isinstance(array, pa.ChunkedArray):
        return [v for chunk in array.chunks for v in to_pylist(chunk)]
    if DataType(array.type).extension_name in ("ketch.image", "ketch.fixed_shape_image"):
        return _image_rows(array)
    from ketch.tensor_values import tensor_rows

    tensors = tensor_rows(array)  # tensors: numpy arrays of their shapes, as Daft gives them
    if tensors is not None:
        return tensors
    if DataType(array.type).extension_name == "ketch.python":
        import pickle

        return [None if v is None else pickle.loads(v) for v in array.storage.to_pylist()]
    if DataType(array.type).extension_name == "ketch.file":  # ketch.File objects, as Daft gives
        from ketch.file import files_from_arrow

        return files_from_arrow(array)
    # list<Image>, struct{..., data: Image}: the same values inside.
    if not isinstance(array.type, pa.BaseExtensionType) and _nests_extension(array.type):
        return _nested_rows(array)
    return array.to_pylist()


def _nests_extension(arrow_type: pa.DataType) -> bool:
    """Whether a list or struct type holds an extension type (image, file, Python, tensor) inside."""
    if isinstance(arrow_type, pa.BaseExtensionType):
        return True
    if (
        pa.types.is_list(arrow_type)
        or pa.types.is_large_list(arrow_type)
        or pa.types.is_fixed_size_list(arrow_type)
    ):
        return _nests_extension(arrow_type.value_type)
    if pa.types.is_struct(arrow_type):
        return any(_nests_extension(arrow_type.field(i).type) for i in range(arrow_type.num_fields))
    return False


def _nested_rows(array: pa.Array) -> list[Any]:
    """Python values of a list or struct array whose children need :func:`to_pylist`'s conversions."""
    valid = array.is_valid().to_pylist()
    if pa.types.is_struct(array.type):
        names = [array.type.field(i).name for i in range(array.type.num_fields)]
        columns = [to_pylist(child) for child in array.flatten()]
        return [
            dict(zip(names, values, strict=True)) if ok else None
            for ok, values in zip(
                valid, zip(*columns, strict=True) if columns else [()] * len(array), strict=True
            )
        ]
    # Offsets and the child by hand: pyarrow's flatten() builds a new child through a builder,
    # which extension types of the C++ core do not have.
    if pa.types.is_fixed_size_list(array.type):
        size = array.type.list_size
        offsets = [(array.offset + i) * size for i in range(len(array) + 1)]
    else:
        offsets = array.offsets.to_pylist()
    first = offsets[0]
    values = to_pylist(array.values.slice(first, offsets[-1] - first))
    return [
        values[offsets[i] - first : offsets[i + 1] - first] if valid[i] else None for i in range(len(array))
    ]


class Series:
    """A named column handed to batch UDFs: ``to_pylist()``, ``to_numpy()``, ``to_arrow()``, ``len()``."""

    def __init__(self, array: pa.Array | pa.ChunkedArray, name: str = "") -> None:
        if isinstance(array, pa.ChunkedArray):
            # Over 2 GiB of binary / string values: one array of the large variant.
            array = large_arrays.combine(array)
        self._array = array
        self._name = name

    @classmethod
    def from_arrow(cls, array: pa.Array | pa.ChunkedArray, name: str = "") -> Series:
        return cls(array, name)

    @classmethod
    def from_pylist(cls, values: list[Any], name: str = "", dtype: DataType | None = None) -> Series:
        """A Series of Python values. Without ``dtype`` the type is inferred as ``from_pydict``
        infers a column (numpy arrays of one dtype -> Tensor, objects Arrow cannot hold ->
        Python); ``DataType.python()`` keeps every value as the Python object it is (numpy arrays
        included); another ``dtype`` converts the values to it (Arrow's conversion). Raises
        pyarrow's ArrowInvalid / ArrowTypeError for values that do not convert."""
        if dtype is None:
            from ketch.io.memory import _column

            return cls(_column(list(values)), name)
        dtype = DataType._infer(dtype)
        if dtype.extension_name == "ketch.python":
            from ketch.pytype import python_array

            return cls(python_array(list(values)), name)
        return cls(pa.array(values, type=dtype.to_arrow()), name)

    @classmethod
    def from_numpy(cls, data: np.ndarray, name: str = "") -> Series:
        """A Series of a numpy array: 1-D -> its Arrow type; N-D -> a Tensor column of the
        trailing shape (one row per leading index)."""
        array = np.asarray(data)
        if array.ndim <= 1:
            return cls(pa.array(array), name)
        return cls.from_pylist(list(array), name)

    def name(self) -> str:
        return self._name

    def cast(self, dtype: DataType | pa.DataType | type) -> Series:
        """The values cast to ``dtype`` by the engine (the same cast as ``col(...).cast``).
        Raises KetchTypeError / KetchValueError as that cast does."""
        from ketch.dataframe import _materialized
        from ketch.expressions.expression import col

        frame = _materialized(pa.table({"v": self._array}))
        return Series(frame.select(col("v").cast(DataType._infer(dtype))).to_arrow().column(0), self._name)

    def datatype(self) -> DataType:
        return DataType(self._array.type)

    def to_arrow(self) -> pa.Array:
        return self._array

    def to_pylist(self) -> list[Any]:
        return to_pylist(self._array)

    def to_numpy(self) -> np.ndarray:
        """A numpy array. FixedShapeImage → (N, H, W, C) uint8 and FixedShapeTensor → (N, *shape)
        without a copy; Embedding (fixed-size list) without nulls → (N, size) without a copy;
        Image of mixed shapes → an object array of (H, W, C) arrays; primitives → Arrow's own
        conversion. Zero-copy arrays are read-only views of the column's buffer."""
        dtype = self.datatype()
        if dtype.is_fixed_shape_image():
            return fixed_shape_image_block(self._array)
        if dtype.extension_name == "arrow.fixed_shape_tensor":
            return self._array.to_numpy_ndarray()
        if pa.types.is_fixed_size_list(self._array.type) and self._array.null_count == 0:
            size = self._array.type.list_size
            values = self._array.flatten()  # respects the array's offset, zero-copy
            return values.to_numpy(zero_copy_only=False).reshape(len(self._array), size)
        if dtype.is_image():
            rows = _image_rows(self._array)
            out = np.empty(len(rows), dtype=object)
            out[:] = rows
            return out
        return self._array.to_numpy(zero_copy_only=False)

    def to_torch(self) -> Any:
        """A torch.Tensor sharing the column's memory where ``to_numpy`` does not copy
        (FixedShapeImage → uint8 (N, H, W, C), FixedShapeTensor, Embedding). The tensor views a
        read-only Arrow buffer: do not write to it (clone first). Raises ImportError without torch,
        TypeError for columns without a fixed shape."""
        import warnings

        import torch

        array = self.to_numpy()
        if array.dtype == object:
            raise TypeError(f"to_torch needs a fixed-shape column, got {self.datatype()!r}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "non-writable array": documented above
            return torch.from_numpy(array)

    def _aggregate(self, name: str) -> Series:
        """A one-value Series: the column aggregation ``name`` over this Series (the engine's own,
        so values and dtypes match ``col(...).<name>()`` in a DataFrame)."""
        from ketch.dataframe import _materialized
        from ketch.expressions.expression import col

        frame = _materialized(pa.table({"v": self._array}))
        return Series(frame.agg(getattr(col("v"), name)().alias("v")).to_arrow().column(0), self._name)

    def sum(self) -> Series:
        """One value: the sum of the non-null values (Daft's ``Series.sum``)."""
        return self._aggregate("sum")

    def count(self) -> Series:
        """One value (UInt64): how many values are not null."""
        return self._aggregate("count")

    def mean(self) -> Series:
        """One value (Float64): the mean of the non-null values."""
        return self._aggregate("mean")

    def min(self) -> Series:
        return self._aggregate("min")

    def max(self) -> Series:
        return self._aggregate("max")

    def stddev(self) -> Series:
        """One value (Float64): the standard deviation, as ``col(...).stddev()``."""
        return self._aggregate("stddev")

    def product(self) -> Series:
        return self._aggregate("product")

    def _scalar(self) -> Any:
        if len(self) != 1:
            raise TypeError(f"only a Series of one value converts to a number, this one has {len(self)}")
        return self.to_pylist()[0]

    def __float__(self) -> float:
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __len__(self) -> int:
        return len(self._array)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.to_pylist())

    def __repr__(self) -> str:
        return f"Series[{self._name}: {self.datatype()!r}, {len(self)} rows]"
