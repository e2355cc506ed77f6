"""Answer checks shared by every benchmark: an order-independent digest of a result, and the
comparison of each engine's check with Ketch's (``run.py`` marks a mismatch and exits non-zero).

Runs in both venvs (Ketch's and the peers'): only numpy and pyarrow.

A case returns ``{"rows": int, "check": value}``, where a value is an int, a float, a string or a
list of them; or ``{"rows": int, "result": x}`` with ``x`` a pyarrow / Polars / pandas table, a
list of tables (partitions: a table counts as one partition) or a function returning one of those:
``run.py`` replaces it by ``digest(x)`` *after* the timed region, so a strong check costs no
engine any time. A ``"check"`` that is a function is likewise called after the timed region.

``"result_columns"`` (names, in order) and ``"result_ordered"`` (a sort: the digest covers the
row order) go with it to ``digest``.

``digest(t)`` is a list: the row count, then per column (by position: engines name columns
differently) the null count, the sum of its values and the sum of its values weighted by a hash of
the row's first column (the key; a float key weighs nothing: engines differ in its last bits), so
that a value paired with the wrong key changes the digest while the row order does not (list leaves,
which do not line up with the rows: the sum only). Sums over floats use ``math.fsum`` (exactly
rounded: independent of the order; numpy's pairwise sum over 1M values); integers, dates, times and
booleans are summed exactly as Python ints; text and binary as the sum of a 64-bit polynomial hash
of their UTF-8 bytes (mod 2**64); lists and fixed-size lists by their flattened values; structs
field by field. With several partitions the digest also holds ``keys_split``: the number of
first-column values that occur in more than one partition (0 for a hash partitioning by that
column), and the partition count is left out (engines cut differently).
"""

from __future__ import annotations

import math
from typing import Any

_MASK = (1 << 64) - 1
_PRIME = 1_099_511_628_211  # FNV's 64-bit prime: the base of the polynomial string hash
_WEIGHT_MOD = 1009  # key weights lie in 1..1009

# A float check is equal when |a - b| <= FLOAT_RTOL * max(|a|, |b|) (+ a tiny absolute floor for
# values near zero): summation order and fused multiply-add differ between engines.
FLOAT_RTOL = 1e-9
FLOAT_ATOL = 1e-9


def _to_arrow(t: Any) -> Any:
    import pyarrow as pa

    if isinstance(t, pa.Table):
        return t
    if isinstance(t, pa.RecordBatch):
        return pa.Table.from_batches([t])
    if hasattr(t, "read_all"):  # a RecordBatchReader (DuckDB's .arrow())
        return t.read_all()
    if hasattr(t, "to_arrow"):  # Polars, Ketch, Daft
        out = t.to_arrow()
        return out.read_all() if hasattr(out, "read_all") else out
    if hasattr(t, "reset_index"):  # pandas: the group keys are the index
        return pa.Table.from_pandas(t.reset_index(drop=not _named_index(t)), preserve_index=False)
    raise TypeError(f"checks.digest: cannot read a {type(t).__name__} as a table")


def _named_index(t: Any) -> bool:
    return any(name is not None for name in t.index.names)


def _string_hashes(array: Any) -> Any:
    """uint64 polynomial hash of each value's bytes (null: 0), vectorised over the Arrow buffers."""
    import numpy as np
    import pyarrow as pa

    array = array.cast(pa.large_binary()) if not pa.types.is_large_binary(array.type) else array
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)[array.offset : array.offset + len(array) + 1]
    data = array.buffers()[2]
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    start, end = int(offsets[0]), int(offsets[-1])
    values = raw[start:end].astype(np.uint64)
    lengths = np.diff(offsets)
    if values.size == 0:
        out = np.zeros(len(array), np.uint64)
    else:
        positions = np.arange(end - start, dtype=np.int64) - np.repeat(offsets[:-1] - start, lengths)
        powers = np.ones(int(lengths.max()) + 1, np.uint64)
        with np.errstate(over="ignore"):
            for i in range(1, len(powers)):
                powers[i] = powers[i - 1] * np.uint64(_PRIME)
            terms = (values + np.uint64(1)) * powers[positions]
        nonempty = lengths > 0
        out = np.zeros(len(array), np.uint64)
        if nonempty.any():
            out[nonempty] = np.add.reduceat(terms, (offsets[:-1] - start)[nonempty])
        with np.errstate(over="ignore"):
            out = out + lengths.astype(np.uint64)  # "" and a null differ by the null count
    if array.null_count:
        out[~np.asarray(array.is_valid())] = 0
    return out


def _leaves(array: Any) -> list[tuple[str, Any]]:
    """(kind, numpy values) of one column: kind "int" (exact sum), "float" or "hash"."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    t = array.type
    if pa.types.is_dictionary(t):
        return _leaves(array.cast(t.value_type))
    if pa.types.is_struct(t):
        return [leaf for i in range(t.num_fields) for leaf in _leaves(pc.struct_field(array, [i]))]
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _leaves(pc.list_flatten(array))
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        return _leaves(array.cast(pa.large_string() if pa.types.is_string_view(t) else pa.large_binary()))
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t):
        return [("hash", _string_hashes(array))]
    if pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return [("hash", _string_hashes(array.cast(pa.large_binary())))]
    if pa.types.is_boolean(t):
        return [("int", np.asarray(array.cast(pa.int64()).fill_null(0)))]
    if pa.types.is_temporal(t):
        width = pa.int32() if t.bit_width == 32 else pa.int64()
        return [("int", np.asarray(array.view(width).fill_null(0)))]
    if pa.types.is_integer(t):
        return [("int", np.asarray(array.cast(pa.int64()).fill_null(0)))]
    if pa.types.is_floating(t) or pa.types.is_decimal(t):
        return [("float", np.asarray(array.cast(pa.float64()).fill_null(0.0)))]
    if pa.types.is_null(t):
        return []
    raise TypeError(f"checks.digest: no digest for a column of type {t}")


def _key_weights(column: Any) -> Any:
    """A weight in 1..1009 per row from the first column's value (nulls: 1)."""
    import numpy as np

    leaves = _leaves(column)
    if not leaves:
        return np.ones(len(column), np.int64)
    kind, values = leaves[0]
    if len(values) != len(column) or kind == "float":
        # A list key (its flattened values do not line up with the rows) or a float one (engines
        # differ in its last bits, and a weight must not): no weights.
        return np.ones(len(column), np.int64)
    bits = values.astype(np.uint64) if kind == "hash" else values.astype(np.int64).view(np.uint64)
    with np.errstate(over="ignore"):
        mixed = (bits * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
    return (mixed % np.uint64(_WEIGHT_MOD)).astype(np.int64) + 1


def _column_digest(array: Any, weights: Any) -> list:
    """Null count, then per leaf its sum and (when the leaf lines up with the rows) its weighted sum."""
    import numpy as np

    out: list = [int(array.null_count)]
    for kind, values in _leaves(array):
        aligned = len(values) == len(weights)
        if kind == "float":
            out.append(_float_sum(values))
            if aligned:
                out.append(_float_sum(values * weights))
        elif kind == "int":
            out.append(_exact_sum(values))
            if aligned:
                out.append(_exact_sum(values * weights))
        else:  # hash: sums mod 2**64
            with np.errstate(over="ignore"):
                out.append(int(values.sum(dtype=np.uint64)))
                if aligned:
                    out.append(int((values * weights.astype(np.uint64)).sum(dtype=np.uint64)))
    return out


def _float_sum(values: Any) -> float:
    """``math.fsum`` (exactly rounded, so independent of the row order) up to 1M values; numpy's
    pairwise sum above (a relative error far below ``FLOAT_RTOL``, and no minute-long digest of a
    vector column)."""
    import numpy as np

    return math.fsum(values) if len(values) <= 1_000_000 else float(np.sum(values, dtype=np.float64))


def _exact_sum(values: Any) -> int:
    """The exact sum of int64 values as a Python int: partial sums of 4,096 values (no overflow
    for |x| < 2**50), then Python's unbounded ints."""
    import numpy as np

    if len(values) == 0:
        return 0
    return sum(int(x) for x in np.add.reduceat(values.astype(np.int64), np.arange(0, len(values), 4096)))


def digest(result: Any, columns: list[str] | None = None, ordered: bool = False) -> list:
    """The order-independent digest of a result (see the module docstring): a table, a list of
    tables (partitions) or a function returning one of those; ``columns``: only these, in this
    order (engines order a join's columns differently). ``ordered``: a digest of the row order too
    (a sort's result): each value weighted by ``row index % 1009 + 1`` instead of by its key."""
    if callable(result) and not hasattr(result, "to_arrow") and not hasattr(result, "schema"):
        result = result()
    if isinstance(result, (list, tuple)):
        return _partitions_digest([_select(_to_arrow(p), columns) for p in result])
    table = _select(_to_arrow(result), columns).combine_chunks()
    if table.num_columns == 0:
        return [table.num_rows]
    if ordered:
        import numpy as np

        weights = np.arange(table.num_rows, dtype=np.int64) % _WEIGHT_MOD + 1
    else:
        weights = _key_weights(table.column(0).combine_chunks())
    out: list = [table.num_rows]
    for column in table.columns:
        out += _column_digest(column.combine_chunks(), weights)
    return out


def _select(table: Any, columns: list[str] | None) -> Any:
    return table if columns is None else table.select(columns)


def _partitions_digest(parts: list) -> list:
    import pyarrow as pa
    import pyarrow.compute as pc

    parts = [p for p in parts if p.num_rows]
    if not parts:
        return [0]
    whole = digest(pa.concat_tables(parts, promote_options="permissive"))
    counts: dict = {}
    for part in parts:
        for key in pc.unique(part.column(0).combine_chunks()).to_pylist():
            counts[key] = counts.get(key, 0) + 1
    return [*whole, {"keys_split": sum(1 for c in counts.values() if c > 1)}]


def same(a: Any, b: Any, rtol: float = FLOAT_RTOL) -> bool:
    """Whether two checks agree: ints, strings and bools exactly; a float (on either side) within
    ``rtol`` relative; lists and dicts element by element."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k], rtol) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y, rtol) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= max(rtol * max(abs(a), abs(b)), FLOAT_ATOL)
    return a == b


def first_difference(a: Any, b: Any, rtol: float = FLOAT_RTOL) -> str:
    """Where two checks first differ, for the report: ``[3]: 1.5 != 1.25``."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return f"length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if not same(x, y, rtol):
                return (
                    f"[{i}]"
                    + (": " if not isinstance(x, (list, dict)) else "")
                    + first_difference(x, y, rtol)
                )
        return ""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if not same(a.get(k), b.get(k), rtol):
                return f"{k}: {a.get(k)!r} != {b.get(k)!r}"
        return ""
    return f"{a!r} != {b!r}"


def short(check: Any) -> str:
    """A check as the table prints it (a digest: its first numbers)."""
    if isinstance(check, float):
        return f"{check:.4f}"
    if isinstance(check, (list, tuple)):
        head = ", ".join(short(x) for x in check[:3])
        return f"[{head}{', ...' if len(check) > 3 else ''}]"
    return str(check)
