"""Ketch data types: Arrow types plus the multimodal extension types (Image, FixedShapeImage)."""

from __future__ import annotations

import enum
import typing
from typing import Any

import pyarrow as pa

from ketch import _core
from ketch.datatype_predicates import DataTypePredicates


class ImageMode(enum.Enum):
    """Pixel layouts, 8 bits per channel (Daft's ImageMode names)."""

    L = "L"
    LA = "LA"
    RGB = "RGB"
    RGBA = "RGBA"

    @classmethod
    def from_mode_string(cls, mode: str) -> ImageMode:
        try:
            return cls(mode)
        except ValueError:
            raise ValueError(f"unsupported image mode {mode!r}: one of L, LA, RGB, RGBA") from None


def mode_name(mode: str | ImageMode | None) -> str | None:
    if mode is None:
        return None
    if isinstance(mode, ImageMode):
        return mode.value
    return ImageMode.from_mode_string(mode).value


class TimeUnit:
    """A time resolution for timestamp, time and duration types (Daft's ``TimeUnit``):
    ``TimeUnit.s()``, ``ms()``, ``us()``, ``ns()`` or ``TimeUnit.from_str("us")``."""

    _NAMES = ("s", "ms", "us", "ns")

    def __init__(self, unit: str) -> None:
        if unit not in self._NAMES:
            raise ValueError(f"unknown time unit {unit!r}: one of 's', 'ms', 'us', 'ns'")
        self._unit = unit

    @classmethod
    def s(cls) -> TimeUnit:
        return cls("s")

    @classmethod
    def ms(cls) -> TimeUnit:
        return cls("ms")

    @classmethod
    def us(cls) -> TimeUnit:
        return cls("us")

    @classmethod
    def ns(cls) -> TimeUnit:
        return cls("ns")

    @classmethod
    def from_str(cls, unit: str) -> TimeUnit:
        """From "s", "ms", "us", "ns" (or "seconds", "milliseconds", "microseconds", "nanoseconds")."""
        aliases = {"seconds": "s", "milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns"}
        return cls(aliases.get(unit.lower(), unit.lower()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TimeUnit) and other._unit == self._unit

    def __hash__(self) -> int:
        return hash(self._unit)

    def __str__(self) -> str:
        return self._unit

    def __repr__(self) -> str:
        return f"TimeUnit({self._unit})"


def _unit_name(unit: TimeUnit | str) -> str:
    return unit._unit if isinstance(unit, TimeUnit) else TimeUnit.from_str(str(unit))._unit


class DataType(DataTypePredicates):
    """A column type. Wraps a ``pyarrow.DataType``; multimodal types are Arrow extension types
    ("ketch.image", "ketch.fixed_shape_image") so they survive Parquet and IPC round trips."""

    def __init__(self, arrow_type: pa.DataType) -> None:
        self._arrow_type = arrow_type

    # -- constructors (Daft's names) -------------------------------------------------------------
    @classmethod
    def int8(cls) -> DataType:
        return cls(pa.int8())

    @classmethod
    def int16(cls) -> DataType:
        return cls(pa.int16())

    @classmethod
    def int32(cls) -> DataType:
        return cls(pa.int32())

    @classmethod
    def int64(cls) -> DataType:
        return cls(pa.int64())

    @classmethod
    def uint8(cls) -> DataType:
        return cls(pa.uint8())

    @classmethod
    def uint32(cls) -> DataType:
        return cls(pa.uint32())

    @classmethod
    def uint64(cls) -> DataType:
        return cls(pa.uint64())

    @classmethod
    def float32(cls) -> DataType:
        return cls(pa.float32())

    @classmethod
    def float64(cls) -> DataType:
        return cls(pa.float64())

    @classmethod
    def bool(cls) -> DataType:
        return cls(pa.bool_())

    @classmethod
    def string(cls) -> DataType:
        return cls(pa.large_string())

    @classmethod
    def binary(cls) -> DataType:
        return cls(pa.large_binary())

    @classmethod
    def list(cls, dtype: DataType) -> DataType:
        return cls(pa.large_list(DataType._infer(dtype).to_arrow()))

    @classmethod
    def uint16(cls) -> DataType:
        return cls(pa.uint16())

    @classmethod
    def null(cls) -> DataType:
        """Null: a column of nulls only."""
        return cls(pa.null())

    @classmethod
    def date(cls) -> DataType:
        """Date: days since 1970-01-01 (Arrow date32)."""
        return cls(pa.date32())

    @classmethod
    def time(cls, timeunit: TimeUnit | str) -> DataType:
        """Time of day in ``timeunit``: time32 for s / ms, time64 for us / ns."""
        unit = _unit_name(timeunit)
        return cls(pa.time32(unit) if unit in ("s", "ms") else pa.time64(unit))

    @classmethod
    def timestamp(cls, timeunit: TimeUnit | str, timezone: str | None = None) -> DataType:
        """Timestamp in ``timeunit`` since the Unix epoch (UTC), shown in ``timezone`` (an IANA name
        such as "America/New_York" or an offset "+02:00"); naive when ``timezone`` is None."""
        return cls(pa.timestamp(_unit_name(timeunit), tz=timezone))

    @classmethod
    def duration(cls, timeunit: TimeUnit | str) -> DataType:
        """A signed length of time in ``timeunit`` (int64)."""
        return cls(pa.duration(_unit_name(timeunit)))

    @classmethod
    def interval(cls) -> DataType:
        """A calendar interval: months, days and nanoseconds (Arrow month_day_nano_interval)."""
        return cls(pa.month_day_nano_interval())

    @classmethod
    def decimal128(cls, precision: int, scale: int) -> DataType:
        """Fixed-point decimal with ``precision`` digits (1-38), ``scale`` of them after the point."""
        if not 1 <= int(precision) <= 38:
            raise ValueError(f"decimal128 precision must be 1..38, got {precision}")
        return cls(pa.decimal128(int(precision), int(scale)))

    @classmethod
    def fixed_size_binary(cls, size: int) -> DataType:
        """Binary values of exactly ``size`` bytes."""
        if not isinstance(size, int) or size <= 0:
            raise ValueError(f"fixed_size_binary size must be a positive int, got {size!r}")
        return cls(pa.binary(size))

    @classmethod
    def fixed_size_list(cls, dtype: Any, size: int) -> DataType:
        """Lists of exactly ``size`` values of ``dtype``."""
        if not isinstance(size, int) or size <= 0:
            raise ValueError(f"fixed_size_list size must be a positive int, got {size!r}")
        return cls(pa.list_(DataType._infer(dtype).to_arrow(), size))

    @classmethod
    def struct(cls, fields: dict[str, Any]) -> DataType:
        """A struct of named fields: ``{name: DataType}`` in order."""
        return cls(pa.struct([(name, DataType._infer(t).to_arrow()) for name, t in fields.items()]))

    @classmethod
    def map(cls, key_type: Any, value_type: Any) -> DataType:
        """A map from ``key_type`` to ``value_type`` (Arrow map: a list of key/value structs)."""
        return cls(pa.map_(DataType._infer(key_type).to_arrow(), DataType._infer(value_type).to_arrow()))

    @classmethod
    def image(
        cls, mode: str | ImageMode | None = None, height: int | None = None, width: int | None = None
    ) -> DataType:
        """Image[mode] (variable shape, pixels HWC uint8), or FixedShapeImage[mode; height x width]
        when height and width are given (then mode is required)."""
        return cls(_core.image_type(mode_name(mode), height, width))

    @classmethod
    def tensor(cls, dtype: Any, shape: tuple[int, ...] | None = None) -> DataType:
        """Tensor of ``dtype`` elements. With ``shape``: FixedShapeTensor, Arrow's canonical
        ``arrow.fixed_shape_tensor`` extension type (row-major; survives Parquet and IPC, and
        pyarrow's ``to_numpy_ndarray`` gives (N, *shape) without a copy). Without: a variable-shape
        tensor stored as Daft does, struct<data: large_list<dtype>, shape: large_list<uint64>>."""
        value = DataType._infer(dtype).to_arrow()
        if not (pa.types.is_integer(value) or pa.types.is_floating(value) or pa.types.is_boolean(value)):
            raise ValueError(f"tensor elements must be numbers or booleans, got {value}")
        if shape is not None:
            dims = [int(d) for d in shape]
            if not dims or any(d <= 0 for d in dims):
                raise ValueError(f"tensor shape must be positive dimensions, got {shape!r}")
            return cls(pa.fixed_shape_tensor(value, dims))
        return cls(pa.struct([("data", pa.large_list(value)), ("shape", pa.large_list(pa.uint64()))]))

    @classmethod
    def embedding(cls, dtype: Any, size: int) -> DataType:
        """Embedding: ``size`` values of ``dtype`` per row, stored as Arrow's fixed_size_list (so
        Embedding and FixedSizeList cast to each other for free); to_numpy gives (N, size)."""
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            raise ValueError(f"embedding size must be a positive int, got {size!r}")
        value = DataType._infer(dtype).to_arrow()
        if not (pa.types.is_integer(value) or pa.types.is_floating(value)):
            raise ValueError(f"embedding elements must be numbers, got {value}")
        return cls(pa.list_(value, size))

    @classmethod
    def python(cls) -> DataType:
        """Python: arbitrary Python objects, each stored pickled (cloudpickle) in the Arrow
        extension type ``ketch.python`` over large_binary; ``to_pydict`` gives the objects back.
        ``from_pydict`` picks it for columns Arrow cannot represent."""
        from ketch.pytype import PYTHON_TYPE

        return cls(PYTHON_TYPE)

    @classmethod
    def uuid(cls) -> DataType:
        """UUID: 16-byte universally unique identifiers, Arrow's canonical extension type
        ``arrow.uuid`` over fixed_size_binary(16) (as Daft). ``from_pydict`` picks it for columns of
        ``uuid.UUID``; ``to_pydict`` gives ``uuid.UUID`` objects."""
        return cls(pa.uuid())

    def is_uuid(self) -> bool:
        """Whether this is :meth:`uuid`."""
        return self.extension_name == "arrow.uuid"

    @classmethod
    def file(cls, media_type: Any = None) -> DataType:
        """File: a lazy reference to an object (path or URL, and its size when known), the Arrow
        extension type ``ketch.file`` over struct<path: large_string, size: int64>.
        ``media_type`` "audio" or "video" gives File[Audio] / File[Video] (Daft's media types),
        whose values are ``ketch.AudioFile`` / ``ketch.VideoFile``; ValueError for others."""
        media = "" if media_type is None else str(media_type).lower()
        if media in ("unknown", "file"):
            media = ""
        if media not in ("", "audio", "video"):
            raise ValueError(f"File media_type must be None, 'audio' or 'video', got {media_type!r}")
        return cls(_core.file_type(media))

    @classmethod
    def from_arrow_type(cls, arrow_type: pa.DataType) -> DataType:
        """The DataType of a pyarrow type (TypeError for anything else)."""
        if not isinstance(arrow_type, pa.DataType):
            raise TypeError(f"from_arrow_type takes a pyarrow.DataType, got {type(arrow_type).__name__}")
        return cls(arrow_type)

    def to_arrow_dtype(self) -> pa.DataType:
        """The pyarrow type (Daft's name for :meth:`to_arrow`)."""
        return self._arrow_type

    @staticmethod
    def infer_from_type(t: Any) -> DataType:
        """The DataType of values of the Python type ``t``, as Daft infers it: ``int`` -> Int64,
        ``list[str]`` -> List[String], ``dict[str, int]`` -> Map, ``tuple[int, str]`` ->
        Struct[_0, _1], ``Optional[T]`` -> T, numpy scalar types by dtype, others -> Python
        (see ``ketch.datatype_infer``)."""
        from ketch.datatype_infer import infer_from_type

        return infer_from_type(t)

    @classmethod
    def from_sql(cls, sql_type: str) -> DataType:
        """The type a SQL type name means (Daft's SQL mapping: ``"int"`` is Int32, ``"tinyint"``
        Int8, ``"string"`` / ``"varchar"`` String, ``"double"`` Float64, ``"decimal(10, 2)"``...),
        parsed by sqlglot. ValueError naming the text when it is not a SQL type."""
        from ketch._optional import require

        require("sqlglot", "DataType.from_sql")
        import sqlglot.expressions as exp
        from sqlglot.errors import ParseError

        from ketch.sql.translate_expr import sql_type as _sql_type

        try:
            node = exp.DataType.build(sql_type)
            return cls(_sql_type(node))
        except (ParseError, ValueError, KeyError) as e:
            raise ValueError(f"{sql_type!r} is not a SQL type name: {e}") from None

    @staticmethod
    def _infer(value: Any) -> DataType:
        """DataType from a DataType, a pyarrow type, a Python type (int, float, str, bool, bytes) or a
        SQL type name (``"tinyint"``, see from_sql)."""
        if isinstance(value, DataType):
            return value
        if isinstance(value, pa.DataType):
            return DataType(value)
        import datetime
        import decimal
        import uuid

        python_types = {
            datetime.datetime: pa.timestamp("us"),
            datetime.date: pa.date32(),
            datetime.time: pa.time64("us"),
            datetime.timedelta: pa.duration("us"),
            decimal.Decimal: pa.decimal128(38, 18),
            int: pa.int64(),
            float: pa.float64(),
            str: pa.large_string(),
            bool: pa.bool_(),
            bytes: pa.large_binary(),
            uuid.UUID: pa.uuid(),
        }
        if isinstance(value, str):
            return DataType.from_sql(value)
        if value in python_types:
            return DataType(python_types[value])
        if typing.get_origin(value) is not None:  # list[int], dict[str, float], Optional[int]...
            return DataType.infer_from_type(value)
        raise TypeError(f"cannot use {value!r} as a data type; use ketch.DataType or a pyarrow type")

    # -- accessors -------------------------------------------------------------------------------
    def to_arrow(self) -> pa.DataType:
        return self._arrow_type

    @property
    def extension_name(self) -> str | None:
        return getattr(self._arrow_type, "extension_name", None)

    def is_image(self) -> bool:
        return self.extension_name == "ketch.image"

    def is_fixed_shape_image(self) -> bool:
        return self.extension_name == "ketch.fixed_shape_image"

    def __eq__(self, other: object) -> bool:
        """Equal logical types, as Daft compares them: the Arrow offset width is storage, not
        type (``string`` and ``large_string`` are both ``String``; ``list`` and ``large_list`` both
        ``List``, also inside structs, maps and lists)."""
        if isinstance(other, DataType):
            return _logical(self._arrow_type) == _logical(other._arrow_type)
        if isinstance(other, pa.DataType):
            return _logical(self._arrow_type) == _logical(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(_logical(self._arrow_type)))

    def __reduce__(self) -> tuple:
        # Through an Arrow IPC schema: extension types (images, files...) survive pickling into a
        # UDF worker process, where pickling a pyarrow type by its alias would not.
        schema = pa.schema([pa.field("t", self._arrow_type)])
        return (_datatype_from_ipc, (schema.serialize().to_pybytes(),))

    def image_info(self) -> tuple[str | None, int | None, int | None]:
        """(mode, height, width) of an image type; height/width are None for variable shape."""
        if not (self.is_image() or self.is_fixed_shape_image()):
            raise TypeError(f"{self!r} is not an image type")
        return _core.image_type_info(self._arrow_type)

    def __repr__(self) -> str:
        """The type as Daft prints it: ``Int64``, ``String``, ``List[Float64]``,
        ``Image[RGB; 224 x 224]``, ``Embedding[Float32; 384]``, ``Tensor[Float32]`` ...
        (``to_arrow()`` gives the Arrow type)."""
        from ketch.datatype_names import daft_type_name

        return daft_type_name(self._arrow_type)

    __str__ = __repr__


def _datatype_from_ipc(data: bytes) -> DataType:
    """Unpickles a DataType (see DataType.__reduce__)."""
    import ketch  # noqa: F401  (registers Ketch's extension types in this process)

    return DataType(pa.ipc.read_schema(pa.py_buffer(data)).field(0).type)


def _logical(t: pa.DataType) -> pa.DataType:
    """`t` with every 32-bit-offset string, binary and list type, maps included, as its
    64-bit-offset twin (the one logical type Daft sees); other types as they are."""
    from ketch.large_arrays import large_variant

    return large_variant(t, through_maps=True)


class _CallableSingletonDataType(DataType):
    """A type without parameters as one shared value: ``DataType.int64`` is the type and
    ``DataType.int64()`` gives it too, as in Daft 0.7 (its docstrings use both spellings)."""

    def __call__(self) -> DataType:
        return self


for _name in (
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "string",
    "bool",
    "binary",
    "null",
    "date",
    "interval",
    "python",
    "uuid",
):
    setattr(DataType, _name, _CallableSingletonDataType(getattr(DataType, _name)()._arrow_type))
del _name
