"""Arrays over 2 GiB: Arrow's binary, string and list types index their values with 32-bit offsets,
so one array of them holds at most 2 GiB (2**31 - 1 bytes or elements). Their ``large_`` variants
use 64-bit offsets. pyarrow answers a conversion that overflows with a ChunkedArray; the engine
wants one array per column of a morsel, so results are combined as the large variant.

Ketch's own types (``DataType.string()`` / ``binary()`` / ``list()``, ``str`` / ``bytes`` hints)
are already the large variants: a result in them never has to be cut."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

# What one 32-bit-offset array can index (bytes of a binary/string, elements of a list).
SMALL_OFFSET_LIMIT = 2**31 - 1


def large_variant(arrow_type: pa.DataType, through_maps: bool = False) -> pa.DataType:
    """``arrow_type`` with every 32-bit-offset type, however deeply nested, replaced by its 64-bit
    variant: binary → large_binary, string → large_string, list → large_list (through struct,
    list, large_list and fixed_size_list children, and with ``through_maps`` a map's keys and
    items). Other types (views, extension types; maps unless asked) are returned as they are."""
    t = arrow_type

    def inner(child: pa.DataType) -> pa.DataType:
        return large_variant(child, through_maps)

    if pa.types.is_binary(t):
        return pa.large_binary()
    if pa.types.is_string(t):
        return pa.large_string()
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(inner(t.value_type)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(inner(t.value_type)), t.list_size)
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(inner(t.field(i).type)) for i in range(t.num_fields)])
    if through_maps and pa.types.is_map(t):
        return pa.map_(inner(t.key_type), t.item_field.with_type(inner(t.item_type)), t.keys_sorted)
    return t


def has_small_offsets(arrow_type: pa.DataType) -> bool:
    """Whether some part of ``arrow_type`` uses 32-bit offsets (see :func:`large_variant`)."""
    return large_variant(arrow_type) != arrow_type


def combine(chunked: pa.ChunkedArray) -> pa.Array:
    """One array holding ``chunked``'s values: its own type when they fit there, else the large
    variant (pyarrow chunks conversions and results that overflow 32-bit offsets). One chunk is
    returned without a copy."""
    if chunked.num_chunks == 1:
        return chunked.chunk(0)
    if chunked.num_chunks == 0:
        return pa.array([], type=chunked.type)
    large = large_variant(chunked.type)
    if large != chunked.type and chunked.nbytes >= SMALL_OFFSET_LIMIT:
        # Widening the offsets shares the chunks' value buffers: one copy, by the concatenation.
        return pa.concat_arrays([c.cast(large) for c in chunked.chunks])
    try:
        return chunked.combine_chunks()
    except (pa.ArrowInvalid, pa.ArrowCapacityError):
        if large == chunked.type:
            raise
        return pa.concat_arrays([c.cast(large) for c in chunked.chunks])


def _all_of(values: list[Any], arrow_type: pa.DataType) -> bool:
    """Whether every value is None or exactly what ``arrow_type`` holds without conversion
    (bytes for large_binary, str for large_string, lists of those for large_list)."""
    if pa.types.is_large_binary(arrow_type):
        return all(v is None or type(v) is bytes for v in values)
    if pa.types.is_large_string(arrow_type):
        return all(v is None or type(v) is str for v in values)
    if pa.types.is_large_list(arrow_type):
        value_type = arrow_type.value_type
        return all(v is None or (type(v) is list and _all_of(v, value_type)) for v in values)
    return False


def _validity(values: list[Any]) -> tuple[pa.Buffer | None, int]:
    nulls = sum(1 for v in values if v is None)
    if nulls == 0:
        return None, 0
    return pa.array([v is not None for v in values], type=pa.bool_()).buffers()[1], nulls


def _large_binary(values: list[bytes | None]) -> pa.Array:
    """large_binary of bytes (or None): the values joined by one copy into one buffer that the
    array holds (pyarrow's builder copies blobs of hundreds of MiB several times as it grows)."""
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum([0 if v is None else len(v) for v in values], out=offsets[1:])
    data = b"".join(v for v in values if v is not None)
    validity, nulls = _validity(values)
    return pa.Array.from_buffers(
        pa.large_binary(), len(values), [validity, pa.py_buffer(offsets), pa.py_buffer(data)], nulls
    )


def _large_list_of_binary(rows: list[list[bytes | None] | None], declared: pa.DataType) -> pa.Array:
    """large_list<large_binary> of lists of bytes (a generator UDF's frames), as _large_binary."""
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([0 if r is None else len(r) for r in rows], out=offsets[1:])
    values = _large_binary([v for r in rows if r is not None for v in r])
    validity, nulls = _validity(rows)
    return pa.Array.from_buffers(
        declared, len(rows), [validity, pa.py_buffer(offsets)], nulls, children=[values]
    )


def from_values(values: list[Any], declared: pa.DataType | None = None) -> pa.Array:
    """``pa.array(values)`` (types inferred from the values) as one array: when the values
    overflow 32-bit offsets, built again as the large variant of the inferred type (same
    conversion rules, no extra copy of the chunks). When ``declared`` is (or, widened, is)
    large_binary / large_string / large_list of them and the values are exactly bytes / str /
    lists of them, built in that large type at once (the same values; blobs are converted once,
    not twice)."""
    target = large_variant(declared) if declared is not None else None
    if target is not None and _all_of(values, target) and any(v is not None for v in values):
        # A 32-bit-offset ``declared`` type: built large all the same, then cast by the caller
        # (which names the UDF when the values do not fit).
        if pa.types.is_large_binary(target):
            return _large_binary(values)
        if pa.types.is_large_list(target) and pa.types.is_large_binary(target.value_type):
            return _large_list_of_binary(values, target)
        return pa.array(values, type=target)
    array = pa.array(values)
    if not isinstance(array, pa.ChunkedArray):
        return array
    large = large_variant(array.type)
    if large == array.type:
        return combine(array)
    del array  # free the chunks before building the array again
    return pa.array(values, type=large)


def overflow_message(name: str, array: pa.Array, declared: pa.DataType, num_rows: int) -> str | None:
    """The error for a result of UDF ``name`` too large for its 32-bit-offset return type, or
    None when the cast failed for another reason."""
    if not has_small_offsets(declared) or array.nbytes < SMALL_OFFSET_LIMIT:
        return None
    return (
        f"UDF '{name}' returned {array.nbytes / 2**30:.2f} GiB in one call of {num_rows} rows, more "
        f"than its return_dtype {declared} holds in one array (32-bit offsets: 2 GiB); declare the "
        f"64-bit-offset type ({large_variant(declared)}, e.g. DataType.binary() / DataType.string() / "
        "DataType.list(...)) or a smaller batch_size"
    )
