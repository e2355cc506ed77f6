"""Python UDFs as native plan nodes.

A UDF call becomes a UDF expression in the plan; the executor runs projects that contain one on
threads of their own (``concurrency`` of them), never on the compute pool. Each call receives one
batch (``batch_size`` rows, or the morsel) as :class:`ketch.Series` arguments.

- ``@ketch.cls(return_dtype=..., batch_size=..., concurrency=...)`` on a class: ``Model(args)``
  binds constructor arguments without running ``__init__``; ``__init__`` runs once per instance, at
  most ``concurrency`` instances, created lazily on the UDF's threads; ``model(col(...))`` calls
  ``__call__`` on batches.
- ``@ketch.udf(return_dtype=..., batch_size=..., concurrency=...)``: the legacy decorator, on a
  batch function or a class with ``__call__``.
- ``Expression.apply(func, return_dtype)``: a row-wise Python function.

Errors raised by user code surface as :class:`ketch.errors.UDFError` naming the UDF, with the
original exception (and its traceback) as ``__cause__``.
"""

from __future__ import annotations

import functools
import itertools
import queue
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from ketch import _core
from ketch.datatype import DataType
from ketch.errors import UDFError
from ketch.expressions.expression import Expression, _expr
from ketch.series import Series, to_pylist

# Exceptions raised inside UDFs, kept until the query's error reaches Python (keyed by a token that
# travels in the native error message).
_errors: dict[int, BaseException] = {}
_error_ids = itertools.count(1)
_errors_lock = threading.Lock()
_TOKEN = "[ketch-udf-error:"


def _stash(exc: BaseException) -> int:
    with _errors_lock:
        token = next(_error_ids)
        _errors[token] = exc
        return token


def reraise_udf_error(error: BaseException) -> None:
    """Turns a native error that carries a UDF token into UDFError(...) from the original exception."""
    message = str(error)
    start = message.find(_TOKEN)
    if start < 0:
        return
    end = message.find("]", start)
    token = int(message[start + len(_TOKEN) : end])
    with _errors_lock:
        original = _errors.pop(token, None)
        # Other batches of the failed query may have stashed errors too; they are not reported.
        _errors.clear()
    clean = (message[:start] + message[end + 1 :]).strip()
    raise UDFError(clean) from original


def _to_arrow_result(result: Any, dtype: DataType, num_rows: int, name: str) -> pa.Array:
    if dtype.extension_name == "ketch.python" and not isinstance(result, (Series, pa.Array, pa.ChunkedArray)):
        from ketch.pytype import python_array

        values = list(result)
        if len(values) != num_rows:
            raise ValueError(f"UDF '{name}' returned {len(values)} values for a batch of {num_rows} rows")
        return python_array(values)
    if isinstance(result, Series):
        array = result.to_arrow()
    elif isinstance(result, pa.ChunkedArray):
        array = result.combine_chunks()
    elif isinstance(result, pa.Array):
        array = result
    elif isinstance(result, np.ndarray) and result.ndim == 1:
        array = pa.array(result)
    elif isinstance(result, (list, tuple, np.ndarray)):
        # Untyped first, then a safe cast below: 1.7 for an int64 UDF is an error, not 1.
        array = pa.array(list(result))
    else:
        raise TypeError(
            f"UDF '{name}' must return a Series, pyarrow array, numpy array or list, "
            f"got {type(result).__name__}"
        )
    if len(array) != num_rows:
        raise ValueError(f"UDF '{name}' returned {len(array)} values for a batch of {num_rows} rows")
    if array.type != dtype.to_arrow():
        try:
            array = array.cast(dtype.to_arrow(), safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise TypeError(
                f"UDF '{name}' returned {array.type}, which cannot be cast to its "
                f"return_dtype {dtype!r}: {exc}"
            ) from exc
    return array


class _Runner:
    """Called by the native executor with the GIL held: (list of pyarrow arrays, num_rows) → array."""

    def __init__(self, name: str, dtype: DataType) -> None:
        self.name = name
        self.dtype = dtype

    def invoke(self, args: list[pa.Array], num_rows: int) -> Any:
        raise NotImplementedError

    def __call__(self, args: list[pa.Array], num_rows: int) -> pa.Array:
        try:
            return _to_arrow_result(self.invoke(args, num_rows), self.dtype, num_rows, self.name)
        except Exception as exc:
            token = _stash(exc)
            raise RuntimeError(
                f"UDF '{self.name}' failed: {type(exc).__name__}: {exc} {_TOKEN}{token}]"
            ) from exc


class _BatchFunctionRunner(_Runner):
    def __init__(self, name: str, dtype: DataType, func: Callable[..., Any]) -> None:
        super().__init__(name, dtype)
        self.func = func

    def invoke(self, args: list[pa.Array], num_rows: int) -> Any:
        return self.func(*[Series(a) for a in args])


class _RowFunctionRunner(_Runner):
    def __init__(self, name: str, dtype: DataType, func: Callable[..., Any]) -> None:
        super().__init__(name, dtype)
        self.func = func

    def invoke(self, args: list[pa.Array], num_rows: int) -> Any:
        columns = [to_pylist(a) for a in args]
        results = [self.func(*row) for row in zip(*columns, strict=True)]
        if self.dtype.extension_name == "ketch.python":
            return results
        return pa.array(results)


class _InstancePoolRunner(_Runner):
    """Calls a method on instances of a user class: at most ``concurrency`` instances, each created
    (``__init__`` run) lazily by the first batch that finds no idle instance."""

    def __init__(
        self,
        name: str,
        dtype: DataType,
        cls: type,
        init_args: tuple,
        init_kwargs: dict,
        method: str,
        concurrency: int,
    ) -> None:
        super().__init__(name, dtype)
        self.cls, self.init_args, self.init_kwargs = cls, init_args, init_kwargs
        self.method = method
        self.concurrency = concurrency
        self._idle: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._created = 0
        self._lock = threading.Lock()

    def _acquire(self) -> Any:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            create = self._created < self.concurrency
            if create:
                self._created += 1
        if not create:
            return self._idle.get()
        try:
            return self.cls(*self.init_args, **self.init_kwargs)
        except BaseException:
            with self._lock:
                self._created -= 1
            raise

    def invoke(self, args: list[pa.Array], num_rows: int) -> Any:
        instance = self._acquire()
        try:
            return getattr(instance, self.method)(*[Series(a) for a in args])
        finally:
            self._idle.put(instance)


def _udf_expression(
    runner: _Runner, args: tuple[Any, ...], batch_size: int | None, concurrency: int | None, is_class: bool
) -> Expression:
    natives = [_expr(a)._native for a in args]
    return Expression(
        _core.udf(
            runner.name,
            runner,
            natives,
            runner.dtype.to_arrow(),
            int(batch_size or 0),
            int(concurrency or 0),
            is_class,
        )
    )


def row_wise_expression(func: Callable[..., Any], args: list[Expression], dtype: DataType) -> Expression:
    name = getattr(func, "__name__", "apply")
    return _udf_expression(_RowFunctionRunner(name, dtype, func), tuple(args), None, None, False)


def _check_positive(name: str, value: int | None) -> None:
    if value is not None and (not isinstance(value, int) or value <= 0):
        raise ValueError(f"{name} must be a positive int, got {value!r}")


class _BoundClass:
    """``Model(*args)`` for a @ketch.cls class: constructor arguments bound, ``__init__`` deferred."""

    def __init__(self, spec: _ClassUdf, args: tuple, kwargs: dict) -> None:
        self._spec = spec
        self._args = args
        self._kwargs = kwargs

    def _method_expression(self, method: str, *exprs: Any) -> Expression:
        spec = self._spec
        runner = _InstancePoolRunner(
            f"{spec.cls.__name__}.{method}" if method != "__call__" else spec.cls.__name__,
            spec.return_dtype,
            spec.cls,
            self._args,
            self._kwargs,
            method,
            spec.concurrency,
        )
        return _udf_expression(runner, exprs, spec.batch_size, spec.concurrency, True)

    def __call__(self, *exprs: Any) -> Expression:
        return self._method_expression("__call__", *exprs)

    def __getattr__(self, method: str) -> Callable[..., Expression]:
        if method.startswith("_") or not callable(getattr(self._spec.cls, method, None)):
            raise AttributeError(method)
        return functools.partial(self._method_expression, method)


class _ClassUdf:
    def __init__(self, cls: type, return_dtype: Any, batch_size: int | None, concurrency: int | None) -> None:
        if return_dtype is None:
            raise TypeError(f"@ketch.cls on {cls.__name__} needs return_dtype=")
        _check_positive("batch_size", batch_size)
        _check_positive("concurrency", concurrency)
        self.cls = cls
        self.return_dtype = DataType._infer(return_dtype)
        self.batch_size = batch_size
        self.concurrency = concurrency or 1
        functools.update_wrapper(self, cls, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> _BoundClass:
        return _BoundClass(self, args, kwargs)


def cls(
    class_: type | None = None,
    *,
    return_dtype: Any = None,
    batch_size: int | None = None,
    concurrency: int | None = None,
    max_concurrency: int | None = None,
    gpus: float = 0,
    use_process: bool | None = None,
) -> Any:
    """Decorates a class as a stateful batch UDF (see the module docstring).

    ``concurrency`` (alias ``max_concurrency``): most instances alive at once, each on its own
    thread. ``batch_size``: rows per ``__call__``. ``gpus`` and ``use_process`` are accepted for
    Daft compatibility; process mode arrives with the UDF runtime issue.
    """
    if use_process:
        raise NotImplementedError("use_process=True arrives with the UDF runtime (process mode)")

    def wrap(c: type) -> _ClassUdf:
        return _ClassUdf(c, return_dtype, batch_size, concurrency or max_concurrency)

    return wrap(class_) if class_ is not None else wrap


class _FunctionUdf:
    def __init__(
        self, func: Callable[..., Any], return_dtype: Any, batch_size: int | None, concurrency: int | None
    ) -> None:
        _check_positive("batch_size", batch_size)
        _check_positive("concurrency", concurrency)
        self.func = func
        self.return_dtype = DataType._infer(return_dtype)
        self.batch_size = batch_size
        self.concurrency = concurrency
        functools.update_wrapper(self, func)

    def __call__(self, *exprs: Any) -> Expression:
        runner = _BatchFunctionRunner(self.func.__name__, self.return_dtype, self.func)
        return _udf_expression(runner, exprs, self.batch_size, self.concurrency, False)


def udf(*, return_dtype: Any, batch_size: int | None = None, concurrency: int | None = None) -> Any:
    """Legacy decorator: a batch function ``f(*Series) -> Series | array | list``, or a class whose
    ``__call__`` takes Series (instances made from ``__init__`` without arguments)."""

    def wrap(target: Any) -> Any:
        if isinstance(target, type):
            return _ClassUdf(target, return_dtype, batch_size, concurrency)()
        return _FunctionUdf(target, return_dtype, batch_size, concurrency)

    return wrap
