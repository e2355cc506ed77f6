"""Daft's supertype rules (``daft_core::utils::supertype::get_supertype``) over Arrow types: the
type two columns are cast to before they are stacked (union by position or name, unpivot)."""

from __future__ import annotations

import pyarrow as pa

_SIGNED = {8: pa.int8(), 16: pa.int16(), 32: pa.int32(), 64: pa.int64()}
_UNSIGNED = {8: pa.uint8(), 16: pa.uint16(), 32: pa.uint32(), 64: pa.uint64()}


def _bits(t: pa.DataType) -> int:
    return t.bit_width


def _numeric_supertype(l: pa.DataType, r: pa.DataType) -> pa.DataType | None:  # noqa: E741
    """Daft's table for two different numeric (or boolean) types; None where it has no entry."""
    is_int, is_uint, is_float = pa.types.is_signed_integer, pa.types.is_unsigned_integer, pa.types.is_floating
    is_bool = pa.types.is_boolean
    for a, b in ((l, r), (r, l)):
        if is_bool(a) and (is_int(b) or is_uint(b) or is_float(b)):
            return b
        if is_int(a) and is_int(b):
            return _SIGNED[max(_bits(a), _bits(b))]
        if is_uint(a) and is_uint(b):
            return _UNSIGNED[max(_bits(a), _bits(b))]
        if is_int(a) and is_uint(b):
            if _bits(b) == 64:
                return pa.float64()  # Daft follows numpy here
            return _SIGNED[max(_bits(a), _bits(b) * 2)]
        if is_float(a) and is_float(b):
            return pa.float64() if max(_bits(a), _bits(b)) == 64 else pa.float32()
        if is_float(a) and (is_int(b) or is_uint(b)):
            if _bits(a) == 64 or _bits(b) >= 32:
                return pa.float64()
            return pa.float32()
    return None


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def supertype(l: pa.DataType, r: pa.DataType) -> pa.DataType | None:  # noqa: E741
    """The type both ``l`` and ``r`` cast to, by Daft's rules, or None when there is none.

    Equal types stay; null gives the other type; numbers and booleans widen as in Daft (int64 with
    uint64 or float32 becomes float64, as numpy does); dates meet timestamps as the timestamp;
    lists meet element-wise; every type but binary and list meets a string as a string
    (``large_string`` when either side is one). Extension types (images, tensors, files) only meet
    themselves."""
    if l == r:
        return l
    if pa.types.is_null(l):
        return r
    if pa.types.is_null(r):
        return l
    numeric = _numeric_supertype(l, r)
    if numeric is not None:
        return numeric
    if _is_string(l) and _is_string(r):
        return pa.large_string()
    for a, b in ((l, r), (r, l)):
        if pa.types.is_date(a) and pa.types.is_timestamp(b):
            return b
        if (pa.types.is_list(a) or pa.types.is_large_list(a)) and (
            pa.types.is_list(b) or pa.types.is_large_list(b)
        ):
            inner = supertype(a.value_type, b.value_type)
            return None if inner is None else pa.large_list(inner)
        if _is_string(b) and not isinstance(a, pa.ExtensionType):
            if pa.types.is_binary(a) or pa.types.is_large_binary(a) or pa.types.is_fixed_size_binary(a):
                return None
            if pa.types.is_list(a) or pa.types.is_large_list(a) or pa.types.is_fixed_size_list(a):
                return None
            return b
    return None
