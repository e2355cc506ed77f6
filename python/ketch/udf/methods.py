"""``@ketch.method`` and ``@ketch.method.batch``: per-method options of a ``@ketch.cls`` class,
as Daft 0.7 writes them.

    @ketch.cls
    class Model:
        def __init__(self, path: str): ...
        def __call__(self, text: str) -> int: ...             # row-wise, Int64 from the annotation
        @ketch.method(return_dtype=ketch.DataType.string())
        def label(self, text: str): ...                       # row-wise, Utf8
        @ketch.method.batch(return_dtype=ketch.DataType.float64())
        def score(self, text: ketch.Series): ...              # one call per batch of Series

A row-wise method gets one row's Python values per call; a batch method gets
:class:`ketch.Series` arguments and returns one value per row (Series, list, numpy or pyarrow
array). The return type comes from ``return_dtype=``, else the method's return annotation
(int, float, str, bool, bytes, list[...]); neither raises TypeError naming the method when the
expression is built.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from typing import Any

from ketch.datatype import DataType

_ATTRIBUTE = "__ketch_method__"


@dataclasses.dataclass(frozen=True)
class MethodSpec:
    """What ``@ketch.method`` recorded on a method."""

    batch: bool
    return_dtype: Any = None
    batch_size: int | None = None
    max_retries: int | None = None
    on_error: str | None = None
    unnest: bool = False


class _MethodDecorator:
    def __call__(
        self,
        method: Callable[..., Any] | None = None,
        *,
        return_dtype: Any = None,
        unnest: bool = False,
        max_retries: int | None = None,
        on_error: str | None = None,
    ) -> Any:
        """Marks a method of a ``@ketch.cls`` class as a row-wise UDF (the default for undecorated
        methods) with its own ``return_dtype`` / ``max_retries`` / ``on_error``. ``unnest=True``:
        the struct it returns becomes one column per field (``return_dtype`` must be a struct:
        ValueError otherwise)."""
        check_unnest(unnest, return_dtype)

        def mark(m: Callable[..., Any]) -> Callable[..., Any]:
            setattr(m, _ATTRIBUTE, MethodSpec(False, return_dtype, None, max_retries, on_error, unnest))
            return m

        return mark(method) if method is not None else mark

    def batch(
        self,
        method: Callable[..., Any] | None = None,
        *,
        return_dtype: Any = None,
        unnest: bool = False,
        batch_size: int | None = None,
        max_retries: int | None = None,
        on_error: str | None = None,
    ) -> Any:
        """Marks a method of a ``@ketch.cls`` class as a batch UDF: Series arguments, one call per
        batch of ``batch_size`` rows (default: the engine's morsel); ``unnest`` as for
        :meth:`__call__`."""
        check_unnest(unnest, return_dtype)

        def mark(m: Callable[..., Any]) -> Callable[..., Any]:
            setattr(m, _ATTRIBUTE, MethodSpec(True, return_dtype, batch_size, max_retries, on_error, unnest))
            return m

        return mark(method) if method is not None else mark


method = _MethodDecorator()


def check_unnest(unnest: bool, return_dtype: Any) -> None:
    """``unnest=True`` needs a struct ``return_dtype`` (Daft's ValueError otherwise)."""
    if not unnest:
        return
    dtype = DataType._infer(return_dtype) if return_dtype is not None else None
    if dtype is None or not dtype.is_struct():
        raise ValueError(
            "Expected Ketch function `return_dtype` to be `DataType.struct(..)` when `unnest=True`, "
            f"instead found: {dtype}"
        )


def method_spec(cls: type, name: str) -> MethodSpec | None:
    """The ``@ketch.method`` options of ``cls.name``, or None when it is not decorated."""
    return getattr(getattr(cls, name, None), _ATTRIBUTE, None)


def annotated_dtype(cls: type, name: str) -> DataType | None:
    """The return type from the annotation of ``cls.name`` (None when there is none usable)."""
    from ketch.udf.decorators import _dtype_from_hint

    try:
        hint = typing.get_type_hints(getattr(cls, name)).get("return")
    except Exception:  # noqa: BLE001 - unresolvable annotations: no hint
        return None
    if hint is None:
        return None
    return _dtype_from_hint(hint)
