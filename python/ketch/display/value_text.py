"""Scalar values as Daft 0.7.26 prints them in ``show()`` / ``repr`` tables (its Rust ``Display``
forms), so a saved output or a doctest reads the same after the import change:

- booleans ``true`` / ``false``; floats in Rust's shortest form without an exponent (``2``,
  ``1.5``, ``100000000000000000000``, ``NaN``, ``inf``);
- durations as components ``1d 2h 3m 4s`` then the remainder in the column's unit
  (``1s 500ms``, ``7µs``, ``0ns``);
- timestamps ``2024-01-02 03:04:05`` with a fraction only where the value has one (``.120``,
  ``.000100``), and ``+00:00`` after a zoned one;
- bytes ``b"abc"`` (Rust's escaped byte string); lists ``[1, 2.5]`` with their items so printed;
  structs one field per line (``{a: 1,`` / ``b: x,`` / ``}``); maps ``{"a": x, "b": None}`` (string
  keys in double quotes, values as printed alone; ``{}`` when empty).
"""

from __future__ import annotations

import datetime
import math
from decimal import Decimal
from typing import Any

import pyarrow as pa

_UNIT_SUFFIX = {"s": "s", "ms": "ms", "us": "µs", "ns": "ns"}
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def value_kind(arrow_type: pa.DataType) -> str:
    """The display kind of a column's values: "bool", "float", "duration:<unit>",
    "timestamp:<unit>[:tz]", "bytes", "list:<item kind>" or "value"."""
    if pa.types.is_boolean(arrow_type):
        return "bool"
    if pa.types.is_floating(arrow_type):
        return "float"
    if pa.types.is_duration(arrow_type):
        return f"duration:{arrow_type.unit}"
    if pa.types.is_timestamp(arrow_type):
        return f"timestamp:{arrow_type.unit}" + (":tz" if arrow_type.tz else "")
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return "bytes"
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return "list:" + value_kind(arrow_type.value_type)
    if pa.types.is_struct(arrow_type):
        return "struct"
    if pa.types.is_map(arrow_type):
        key = (
            "text"
            if pa.types.is_string(arrow_type.key_type) or pa.types.is_large_string(arrow_type.key_type)
            else value_kind(arrow_type.key_type)
        )
        return f"map:{key}|{value_kind(arrow_type.item_type)}"
    return "value"


def value_text(value: Any, kind: str) -> str | None:
    """``value`` as Daft prints it for its column kind, or None when the generic text applies."""
    if value is None:
        return "None"
    if kind == "bool":
        return "true" if value else "false"
    if kind == "float":
        return float_text(float(value))
    if kind.startswith("duration:"):
        return duration_text(value, kind.split(":")[1])
    if kind.startswith("timestamp:") and isinstance(value, datetime.datetime):
        return timestamp_text(value, kind.split(":")[1])
    if kind == "bytes" and isinstance(value, bytes | bytearray):
        return bytes_text(bytes(value))
    if kind == "struct" and isinstance(value, dict):
        # One field per line, values unquoted: "{a: 1,\nb: x,\n}".
        return "{" + "".join(f"{k}: {_plain(v)},\n" for k, v in value.items()) + "}"
    if kind.startswith("map:") and isinstance(value, list):
        key_kind, item_kind = kind[len("map:") :].split("|", 1)
        pairs = []
        for key, item in value:
            key_text = f'"{key}"' if key_kind == "text" and key is not None else _shown(key, key_kind)
            pairs.append(f"{key_text}: {_shown(item, item_kind)}")
        return "{" + ", ".join(pairs) + "}"
    if kind.startswith("list:") and isinstance(value, list):
        item_kind = kind[len("list:") :]
        items = [value_text(v, item_kind) for v in value]
        shown = (t if t is not None else str(v) for t, v in zip(items, value, strict=True))
        return "[" + ", ".join(shown) + "]"
    return None


def _shown(value: Any, kind: str) -> str:
    text = value_text(value, kind)
    return text if text is not None else str(value)


def _plain(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return float_text(value)
    return str(value)


def float_text(x: float) -> str:
    """Rust's ``Display`` of an f64: the shortest round-trip digits, never an exponent."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    text = format(Decimal(repr(x)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def duration_text(value: Any, unit: str) -> str:
    """``1d 2h 3m 4s 500ms``: the non-zero components, the last in the column's unit."""
    per_second = _PER_SECOND[unit]
    if isinstance(value, datetime.timedelta):
        micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
        ticks = micros * per_second // 1_000_000
    else:  # the column's integer ticks (the table printer passes them)
        ticks = int(value)
    sign, ticks = ("-", -ticks) if ticks < 0 else ("", ticks)
    seconds, fraction = divmod(ticks, per_second)
    days, seconds = divmod(seconds, 86_400)
    hours, seconds = divmod(seconds, 3_600)
    minutes, seconds = divmod(seconds, 60)
    parts = [f"{n}{label}" for n, label in ((days, "d"), (hours, "h"), (minutes, "m"), (seconds, "s")) if n]
    if fraction and unit != "s":
        parts.append(f"{fraction}{_UNIT_SUFFIX[unit]}")
    if not parts:
        return f"{sign}0{_UNIT_SUFFIX[unit]}"
    return sign + " ".join(parts)


def timestamp_text(value: datetime.datetime, unit: str) -> str:
    """``2024-01-02 03:04:05[.fff|.ffffff][ +00:00]``: the fraction in the fewest of 3 or 6
    digits that hold it (Python values carry microseconds)."""
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    micros = value.microsecond
    if micros and unit != "s":
        text += f".{micros // 1000:03d}" if micros % 1000 == 0 else f".{micros:06d}"
    if value.tzinfo is not None:
        offset = value.utcoffset() or datetime.timedelta(0)
        total = int(offset.total_seconds())
        sign = "-" if total < 0 else "+"
        hours, rest = divmod(abs(total), 3600)
        text += f" {sign}{hours:02d}:{rest // 60:02d}"
    return text


def bytes_text(data: bytes) -> str:
    """Rust's escaped byte string: ``b"abc"``, ``b"\\x00\\xff"``, ``b"say \\"hi\\""``."""
    out = []
    for byte in data:
        char = chr(byte)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif 0x20 <= byte < 0x7F:
            out.append(char)
        else:
            out.append(f"\\x{byte:02x}")
    return 'b"' + "".join(out) + '"'
