"""``DataType.infer_from_type``: Daft's mapping of Python type hints to DataTypes (``int`` ->
Int64, ``list[str]`` -> List[String], ``dict[str, int]`` -> Map[String: Int64], ``tuple[int,
str]`` -> Struct[_0: Int64, _1: String], ``Optional[T]`` / ``T | None`` -> T, numpy scalar
types by their dtype, anything else -> Python), as Daft 0.7.26 infers them."""

from __future__ import annotations

import datetime
import types
import typing
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    from ketch.datatype import DataType

_SCALARS: dict[Any, pa.DataType] = {
    int: pa.int64(),
    float: pa.float64(),
    str: pa.large_string(),
    bool: pa.bool_(),
    bytes: pa.large_binary(),
    datetime.datetime: pa.timestamp("us"),
    datetime.date: pa.date32(),
    datetime.time: pa.time64("us"),
    datetime.timedelta: pa.duration("us"),
    type(None): pa.null(),
}


def infer_from_type(t: Any) -> DataType:
    """The DataType of values of Python type ``t`` (a class or a typing generic)."""
    from ketch.datatype import DataType

    if t in _SCALARS:
        return DataType(_SCALARS[t])
    if isinstance(t, type) and issubclass(t, np.generic) and not issubclass(t, np.object_):
        return DataType(pa.from_numpy_dtype(np.dtype(t)))
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin in (typing.Union, types.UnionType):
        kept = [a for a in args if a is not type(None)]
        return infer_from_type(kept[0]) if len(kept) == 1 else DataType.python()
    if t is list or origin is list:
        return DataType.list(infer_from_type(args[0]) if args else DataType.python())
    if t is dict or origin is dict:
        key, value = args if len(args) == 2 else (object, object)
        return DataType.map(infer_from_type(key), infer_from_type(value))
    if origin is tuple and args and Ellipsis not in args:
        return DataType.struct({f"_{i}": infer_from_type(a) for i, a in enumerate(args)})
    return DataType.python()
