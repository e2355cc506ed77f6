"""Daft's ``DataType`` predicates and accessors (``is_int64()``, ``is_list()``, ``dtype``,
``size``, ``shape``, ``fields``, ``image_mode`` ...), answered from the Arrow type a Ketch
``DataType`` holds. Mixed into :class:`ketch.DataType`.

Ketch's storage choices decide some answers: an Embedding is Arrow's ``fixed_size_list`` of
numbers (so ``is_embedding()`` and ``is_fixed_size_list()`` are both true for it), a variable
shape Tensor is ``struct<data: large_list, shape: large_list<uint64>>`` and a fixed-shape one is
Arrow's ``arrow.fixed_shape_tensor``."""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def _is_tensor_struct(t: pa.DataType) -> bool:
    return (
        pa.types.is_struct(t)
        and t.num_fields == 2
        and t.field(0).name == "data"
        and t.field(1).name == "shape"
        and pa.types.is_large_list(t.field(1).type)
    )


class DataTypePredicates:
    """``is_*`` predicates and accessors over ``self._arrow_type`` (see the module docstring)."""

    _arrow_type: pa.DataType

    def _ext(self) -> str | None:
        return getattr(self._arrow_type, "extension_name", None)

    # -- primitive types ---------------------------------------------------------------------
    def is_null(self) -> bool:
        return pa.types.is_null(self._arrow_type)

    def is_boolean(self) -> bool:
        return pa.types.is_boolean(self._arrow_type)

    def is_int8(self) -> bool:
        return self._arrow_type == pa.int8()

    def is_int16(self) -> bool:
        return self._arrow_type == pa.int16()

    def is_int32(self) -> bool:
        return self._arrow_type == pa.int32()

    def is_int64(self) -> bool:
        return self._arrow_type == pa.int64()

    def is_uint8(self) -> bool:
        return self._arrow_type == pa.uint8()

    def is_uint16(self) -> bool:
        return self._arrow_type == pa.uint16()

    def is_uint32(self) -> bool:
        return self._arrow_type == pa.uint32()

    def is_uint64(self) -> bool:
        return self._arrow_type == pa.uint64()

    def is_float32(self) -> bool:
        return self._arrow_type == pa.float32()

    def is_float64(self) -> bool:
        return self._arrow_type == pa.float64()

    def is_decimal128(self) -> bool:
        return pa.types.is_decimal128(self._arrow_type)

    def is_integer(self) -> bool:
        return pa.types.is_integer(self._arrow_type)

    def is_numeric(self) -> bool:
        t = self._arrow_type
        return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)

    def is_string(self) -> bool:
        return pa.types.is_string(self._arrow_type) or pa.types.is_large_string(self._arrow_type)

    def is_binary(self) -> bool:
        return pa.types.is_binary(self._arrow_type) or pa.types.is_large_binary(self._arrow_type)

    def is_fixed_size_binary(self) -> bool:
        return pa.types.is_fixed_size_binary(self._arrow_type)

    # -- temporal ------------------------------------------------------------------------------
    def is_timestamp(self) -> bool:
        return pa.types.is_timestamp(self._arrow_type)

    def is_date(self) -> bool:
        return pa.types.is_date(self._arrow_type)

    def is_time(self) -> bool:
        return pa.types.is_time(self._arrow_type)

    def is_duration(self) -> bool:
        return pa.types.is_duration(self._arrow_type)

    def is_interval(self) -> bool:
        return pa.types.is_interval(self._arrow_type)

    def is_temporal(self) -> bool:
        kinds = (pa.types.is_timestamp, pa.types.is_date, pa.types.is_time, pa.types.is_duration)
        return any(is_kind(self._arrow_type) for is_kind in kinds) or pa.types.is_interval(self._arrow_type)

    # -- nested ----------------------------------------------------------------------------------
    def is_list(self) -> bool:
        return pa.types.is_list(self._arrow_type) or pa.types.is_large_list(self._arrow_type)

    def is_fixed_size_list(self) -> bool:
        return pa.types.is_fixed_size_list(self._arrow_type)

    def is_struct(self) -> bool:
        return pa.types.is_struct(self._arrow_type) and not _is_tensor_struct(self._arrow_type)

    def is_map(self) -> bool:
        return pa.types.is_map(self._arrow_type)

    # -- logical / extension types ------------------------------------------------------------
    def is_extension(self) -> bool:
        return isinstance(self._arrow_type, pa.ExtensionType) and self._ext() not in (
            "ketch.image", "ketch.fixed_shape_image", "ketch.python", "ketch.file",
            "arrow.fixed_shape_tensor", "arrow.uuid",
        )  # fmt: skip

    def is_embedding(self) -> bool:
        t = self._arrow_type
        if not pa.types.is_fixed_size_list(t):
            return False
        return pa.types.is_integer(t.value_type) or pa.types.is_floating(t.value_type)

    def is_tensor(self) -> bool:
        return _is_tensor_struct(self._arrow_type)

    def is_fixed_shape_tensor(self) -> bool:
        return self._ext() == "arrow.fixed_shape_tensor"

    def is_sparse_tensor(self) -> bool:
        return False  # Ketch has no sparse tensor type yet

    def is_fixed_shape_sparse_tensor(self) -> bool:
        return False

    def is_python(self) -> bool:
        return self._ext() == "ketch.python"

    def is_file(self) -> bool:
        return self._ext() == "ketch.file"

    def is_logical(self) -> bool:
        """A type with a meaning beyond its storage (embedding, image, tensor, file, UUID...)."""
        return (
            self.is_embedding() or self.is_tensor() or self.is_fixed_shape_tensor() or self.is_file()
            or self._ext() in ("ketch.image", "ketch.fixed_shape_image", "arrow.uuid")
        )  # fmt: skip

    # -- accessors -------------------------------------------------------------------------------
    @property
    def dtype(self) -> Any:
        """The element type of a list, fixed-size list, embedding or tensor (AttributeError
        otherwise, as Daft)."""
        from ketch.datatype import DataType

        t = self._arrow_type
        if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            return DataType(t.value_type)
        if _is_tensor_struct(t):
            return DataType(t.field(0).type.value_type)
        if self.is_fixed_shape_tensor():
            return DataType(t.value_type)
        raise AttributeError(f"{self!r} has no element type")

    @property
    def size(self) -> int:
        """The length of a fixed-size list or embedding, or the byte width of a fixed-size binary
        (AttributeError otherwise, as Daft)."""
        if pa.types.is_fixed_size_list(self._arrow_type):
            return int(self._arrow_type.list_size)
        if pa.types.is_fixed_size_binary(self._arrow_type):
            return int(self._arrow_type.byte_width)
        raise AttributeError(f"{self!r} has no fixed size")

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of a fixed-shape tensor, or (height, width) of a fixed-shape image
        (AttributeError otherwise, as Daft)."""
        if self.is_fixed_shape_tensor():
            return tuple(int(d) for d in self._arrow_type.shape)
        if self._ext() == "ketch.fixed_shape_image":
            _mode, height, width = self.image_info()  # type: ignore[attr-defined]
            return (int(height), int(width))
        raise AttributeError(f"{self!r} has no fixed shape")

    @property
    def fields(self) -> dict[str, Any]:
        """A struct's fields, name → DataType (AttributeError otherwise, as Daft)."""
        from ketch.datatype import DataType

        t = self._arrow_type
        if not pa.types.is_struct(t):
            raise AttributeError(f"{self!r} is not a struct")
        return {t.field(i).name: DataType(t.field(i).type) for i in range(t.num_fields)}

    @property
    def image_mode(self) -> Any:
        """An image type's mode (``ImageMode.RGB``...), None for a mixed-mode image
        (AttributeError otherwise, as Daft)."""
        from ketch.datatype import ImageMode

        if self._ext() not in ("ketch.image", "ketch.fixed_shape_image"):
            raise AttributeError(f"{self!r} is not an image type")
        mode, _height, _width = self.image_info()  # type: ignore[attr-defined]
        return None if mode is None else ImageMode(mode)

    @property
    def key_type(self) -> Any:
        """A map's key type (AttributeError otherwise, as Daft)."""
        from ketch.datatype import DataType

        if not pa.types.is_map(self._arrow_type):
            raise AttributeError(f"{self!r} is not a map")
        return DataType(self._arrow_type.key_type)

    @property
    def value_type(self) -> Any:
        """A map's value type (AttributeError otherwise, as Daft)."""
        from ketch.datatype import DataType

        if not pa.types.is_map(self._arrow_type):
            raise AttributeError(f"{self!r} is not a map")
        return DataType(self._arrow_type.item_type)

    @property
    def precision(self) -> int:
        """A decimal's precision (AttributeError otherwise, as Daft)."""
        if not pa.types.is_decimal(self._arrow_type):
            raise AttributeError(f"{self!r} is not a decimal")
        return int(self._arrow_type.precision)

    @property
    def scale(self) -> int:
        """A decimal's scale (AttributeError otherwise, as Daft)."""
        if not pa.types.is_decimal(self._arrow_type):
            raise AttributeError(f"{self!r} is not a decimal")
        return int(self._arrow_type.scale)

    @property
    def timeunit(self) -> Any:
        """The ``TimeUnit`` of a timestamp, time or duration (AttributeError otherwise, as Daft)."""
        from ketch.datatype import TimeUnit

        t = self._arrow_type
        if not (pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_duration(t)):
            raise AttributeError(f"{self!r} has no time unit")
        return TimeUnit(t.unit)

    @property
    def timezone(self) -> str | None:
        """A timestamp's time zone, None when naive (AttributeError otherwise, as Daft)."""
        if not pa.types.is_timestamp(self._arrow_type):
            raise AttributeError(f"{self!r} is not a timestamp")
        return self._arrow_type.tz
