"""Ketch data types of pydantic models: the struct a structured-output prompt returns (Daft's
``DataType.infer_from_type`` for a ``return_format``)."""

from __future__ import annotations

import enum
import types
import typing
from typing import Any

from ketch.datatype import DataType

__all__ = ["dtype_of_model"]


def _dtype(hint: Any, where: str) -> DataType:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(options) == 1:
            return _dtype(options[0], where)
        raise TypeError(f"return_format: {where} is a union of several types ({hint!r}); use one type")
    if origin is typing.Literal:
        values = typing.get_args(hint)
        return _dtype(type(values[0]), where) if values else DataType.string()
    if origin in (list, tuple, set, frozenset):
        args = typing.get_args(hint)
        return DataType.list(_dtype(args[0], where) if args else DataType.string())
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return DataType.string()
    if isinstance(hint, type) and hasattr(hint, "model_fields"):
        return dtype_of_model(hint)
    simple = {str: DataType.string(), int: DataType.int64(), float: DataType.float64(), bool: DataType.bool()}
    if hint in simple:
        return simple[hint]
    raise TypeError(f"return_format: {where} has type {hint!r}, which has no Ketch data type")


def dtype_of_model(model: type) -> DataType:
    """Struct of the model's fields, in order: str → String, int → Int64, float → Float64,
    bool → Bool, list[T] → List[T], a nested model → Struct, Optional[T] → T (nullable), Literal /
    Enum → their value type. TypeError for a field type with no Ketch type."""
    fields = {
        name: _dtype(info.annotation, f"field '{model.__name__}.{name}'")
        for name, info in model.model_fields.items()  # type: ignore[attr-defined]
    }
    return DataType.struct(fields)
