"""Daft's JSON text functions (``json_array_length``, ``json_object_keys``, ``json_tuple``),
Spark's names. Each parses every string with Python's ``json`` module, row by row (a row-wise
Python function in the plan: fine for metadata columns, not for millions of large documents); a
null, unparsable or wrongly shaped input gives null, never an error. Values come out as Daft
writes them (serde_json): compact JSON with sorted keys for nested values, ``true`` / ``null`` /
``1.5`` / ``1000.0`` / ``1e20`` for scalars."""

from __future__ import annotations

import json
import math
from typing import Any

from ketch.datatype import DataType
from ketch.expressions.expression import Expression

__all__ = ["json_array_length", "json_object_keys", "json_tuple"]


def _parse(text: Any) -> Any:
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _float_text(value: float) -> str:
    """A float as serde_json / Daft write it: shortest digits, ``1000.0``, ``1e20``, ``1e-7``."""
    if math.isnan(value) or math.isinf(value):
        return "null"
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa.removesuffix('.0')}e{int(exponent)}"
    return text


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, int):
        return str(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _array_length(text: Any) -> int | None:
    value = _parse(text)
    return len(value) if isinstance(value, list) else None


def _object_keys(text: Any) -> list[str] | None:
    value = _parse(text)
    return sorted(value) if isinstance(value, dict) else None


def json_array_length(expr: Expression) -> Expression:
    """The number of elements of each string's outermost JSON array (Int32); null where the
    string is null, not JSON, or not an array."""
    return expr.apply(_array_length, return_dtype=DataType.int32())


def json_object_keys(expr: Expression) -> Expression:
    """The top-level keys of each string's JSON object, sorted (List[String]; Daft's order, not
    Spark's insertion order); null where the string is null, not JSON, or not an object."""
    return expr.apply(_object_keys, return_dtype=DataType.list(DataType.string()))


def json_tuple(expr: Expression, *fields: str) -> Expression:
    """The values of the top-level keys ``fields`` of each string's JSON object, as a Struct with
    one String field per key (strings as they are, other values as JSON text: ``"1"``,
    ``"true"``, ``"null"``, ``'{"x":[1,2]}'``); a missing key gives a null field, and a null, non-JSON
    or non-object input a null struct. Raises ValueError without fields or with a repeated one."""
    if not fields:
        raise ValueError("json_tuple requires at least one field name")
    if len(set(fields)) != len(fields):
        raise ValueError(f"json_tuple: field names must be unique, got {list(fields)}")
    names = list(fields)

    def pick(text: Any) -> dict[str, str | None] | None:
        value = _parse(text)
        if not isinstance(value, dict):
            return None
        return {n: (_text(value[n]) if n in value else None) for n in names}

    return expr.apply(pick, return_dtype=DataType.struct({n: DataType.string() for n in names}))
