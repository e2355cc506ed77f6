"""Type names as Daft prints them (``Int64``, ``String``, ``List[Float64]``, ``Image[RGB; 224 x 224]``,
``Embedding[Float32; 384]``, ``Tensor[Float32; [2, 3]]``), from the Arrow type a column holds.

The name depends only on the Arrow type, so a column prints the same whichever reader or
operator produced it (``string`` and ``large_string`` are both ``String``, ``list`` and
``large_list`` both ``List[...]``)."""

from __future__ import annotations

import pyarrow as pa

_PRIMITIVES: dict[pa.DataType, str] = {
    pa.null(): "Null",
    pa.bool_(): "Bool",
    pa.int8(): "Int8",
    pa.int16(): "Int16",
    pa.int32(): "Int32",
    pa.int64(): "Int64",
    pa.uint8(): "UInt8",
    pa.uint16(): "UInt16",
    pa.uint32(): "UInt32",
    pa.uint64(): "UInt64",
    pa.float16(): "Float16",
    pa.float32(): "Float32",
    pa.float64(): "Float64",
    pa.string(): "String",
    pa.large_string(): "String",
    pa.binary(): "Binary",
    pa.large_binary(): "Binary",
    pa.date32(): "Date",
    pa.date64(): "Date",
}


def _is_variable_tensor(arrow_type: pa.DataType) -> bool:
    """Ketch's (and Daft's) variable-shape tensor layout: struct<data: list<T>, shape: list<uint64>>."""
    if not pa.types.is_struct(arrow_type) or arrow_type.num_fields != 2:
        return False
    data, shape = arrow_type.field(0), arrow_type.field(1)
    return (
        data.name == "data"
        and shape.name == "shape"
        and (pa.types.is_large_list(data.type) or pa.types.is_list(data.type))
        and (pa.types.is_large_list(shape.type) or pa.types.is_list(shape.type))
        and shape.type.value_type == pa.uint64()
    )


def daft_type_name(arrow_type: pa.DataType) -> str:
    """The name Daft prints for a column of ``arrow_type`` (see the module docstring)."""
    extension = getattr(arrow_type, "extension_name", None)
    if extension is not None:
        return _extension_name(arrow_type, extension)
    name = _PRIMITIVES.get(arrow_type)
    if name is not None:
        return name
    if pa.types.is_dictionary(arrow_type):
        return daft_type_name(arrow_type.value_type)
    if pa.types.is_timestamp(arrow_type):
        return (
            f"Timestamp[{arrow_type.unit}; {arrow_type.tz}]"
            if arrow_type.tz
            else f"Timestamp[{arrow_type.unit}]"
        )
    if pa.types.is_time(arrow_type):
        return f"Time[{arrow_type.unit}]"
    if pa.types.is_duration(arrow_type):
        return f"Duration[{arrow_type.unit}]"
    if pa.types.is_interval(arrow_type):
        return "Interval"
    if pa.types.is_decimal(arrow_type):
        return f"Decimal[precision: {arrow_type.precision}, scale: {arrow_type.scale}]"
    if pa.types.is_fixed_size_binary(arrow_type):
        return f"Binary[{arrow_type.byte_width}]"
    if pa.types.is_fixed_size_list(arrow_type):
        value = arrow_type.value_type
        # Ketch stores Embedding as a fixed-size list of numbers (they cast to each other for free).
        if pa.types.is_integer(value) or pa.types.is_floating(value):
            return f"Embedding[{daft_type_name(value)}; {arrow_type.list_size}]"
        return f"List[{daft_type_name(value)}; {arrow_type.list_size}]"
    if (
        pa.types.is_list(arrow_type)
        or pa.types.is_large_list(arrow_type)
        or pa.types.is_list_view(arrow_type)
    ):
        return f"List[{daft_type_name(arrow_type.value_type)}]"
    if pa.types.is_map(arrow_type):
        return f"Map[{daft_type_name(arrow_type.key_type)}: {daft_type_name(arrow_type.item_type)}]"
    if pa.types.is_struct(arrow_type):
        if _is_variable_tensor(arrow_type):
            return f"Tensor[{daft_type_name(arrow_type.field(0).type.value_type)}]"
        fields = ", ".join(
            f"{arrow_type.field(i).name}: {daft_type_name(arrow_type.field(i).type)}"
            for i in range(arrow_type.num_fields)
        )
        return f"Struct[{fields}]"
    return str(arrow_type)


def _extension_name(arrow_type: pa.DataType, extension: str) -> str:
    if extension in ("ketch.image", "ketch.fixed_shape_image"):
        from ketch import _core

        mode, height, width = _core.image_type_info(arrow_type)
        if height is not None and width is not None:
            return f"Image[{mode}; {height} x {width}]"
        return f"Image[{mode or 'MIXED'}]"
    if extension == "arrow.fixed_shape_tensor":
        shape = ", ".join(str(d) for d in arrow_type.shape)
        return f"Tensor[{daft_type_name(arrow_type.value_type)}; [{shape}]]"
    if extension == "ketch.python":
        return "Python"
    if extension == "arrow.uuid":
        return "UUID"
    if extension == "ketch.file":
        from ketch import _core

        media = _core.file_media(arrow_type)
        return f"File[{media.capitalize()}]" if media else "File"
    return f"Extension[{extension}; {daft_type_name(arrow_type.storage_type)}]"
