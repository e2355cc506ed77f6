"""The decorators: ``@ketch.func`` (row-wise, ``.batch``, async, generators, type hints as the
return dtype), ``@ketch.cls`` (class UDFs with ``__init__`` once per instance) and the legacy
``@ketch.udf``; what they return binds arguments and builds the plan node."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from ketch.datatype import DataType
from ketch.expressions.expression import Expression
from ketch.udf.async_runner import _ASYNC_MAX_CONCURRENCY, _AsyncRowRunner
from ketch.udf.binding import LegacyUdfOptions, bind_call, replace_options
from ketch.udf.generators import _GeneratorRunner
from ketch.udf.methods import check_unnest
from ketch.udf.options import _arrow_representable, _check_options, _check_positive, _Options
from ketch.udf.plan_node import _prestart_workers, _udf_expression
from ketch.udf.pool import _InstancePoolRunner
from ketch.udf.runners import _BatchFunctionRunner, _RowFunctionRunner, _Runner


class _BoundClass(LegacyUdfOptions):
    """``Model(*args)`` for a @ketch.cls class: constructor arguments bound, ``__init__`` deferred."""

    def __init__(self, spec: _ClassUdf, args: tuple, kwargs: dict) -> None:
        self._spec = spec
        self._args = args
        self._kwargs = kwargs
        self._local: Any = None  # the instance plain-value calls run on

    def _with_options(self, **changes: Any) -> _BoundClass:
        spec = _ClassUdf(self._spec.cls, replace_options(self._spec.options, **changes))
        return _BoundClass(spec, self._args, self._kwargs)

    def with_init_args(self, *args: Any, **kwargs: Any) -> _BoundClass:
        """The same class UDF whose instances are made with ``__init__(*args, **kwargs)``
        (Daft's legacy ``UDF.with_init_args``)."""
        return _BoundClass(self._spec, args, kwargs)

    def _method_expression(self, method: str, *exprs: Any) -> Expression:
        from ketch.udf.methods import method_spec

        spec = self._spec
        name = f"{spec.cls.__name__}.{method}" if method != "__call__" else spec.cls.__name__
        if not any(isinstance(e, Expression) for e in exprs):
            # Plain values (Daft 0.7): run here, on an instance made here once.
            if self._local is None:
                self._local = spec.cls(*self._args, **self._kwargs)
            return getattr(self._local, method)(*exprs)
        target = inspect.unwrap(getattr(spec.cls, method))
        call_kind = (
            "async"
            if inspect.iscoroutinefunction(target)
            else "generator"
            if inspect.isgeneratorfunction(target)
            else ""
        )
        options, row_wise = _method_options(spec, method, name, generator=call_kind == "generator")
        dtype = options.return_dtype
        if call_kind == "generator":  # each row's items as one list, exploded into rows
            dtype = DataType(pa.large_list(dtype.to_arrow()))
        runner = _InstancePoolRunner(
            name,
            dtype,
            spec.cls,
            self._args,
            self._kwargs,
            method,
            options.concurrency or 1,
            max_retries=options.max_retries,
            on_error=options.on_error,
            timeout_s=options.timeout_s,
            row_wise=row_wise or bool(call_kind),
            call_kind=call_kind,
        )
        expression = _udf_expression(runner, exprs, options, True, explode=call_kind == "generator")
        mark = method_spec(spec.cls, method)
        return expression.unnest() if mark is not None and mark.unnest else expression

    def __call__(self, *exprs: Any) -> Expression:
        return self._method_expression("__call__", *exprs)

    def __getattr__(self, method: str) -> Callable[..., Expression]:
        if method.startswith("__") or not callable(getattr(self._spec.cls, method, None)):
            raise AttributeError(method)
        return functools.partial(self._method_expression, method)


def _method_options(
    spec: _ClassUdf, method: str, name: str, generator: bool = False
) -> tuple[_Options, bool]:
    """(options, row-wise?) of a call to ``method``: a ``@ketch.method`` / ``.batch`` mark decides;
    an undecorated method is batch-wise when the class was given ``return_dtype=`` (Ketch's
    original form), else row-wise as in Daft 0.7. The type: the mark's ``return_dtype``, the
    class's, then the method's return annotation (``Iterator[T]``: T for a generator method);
    none raises TypeError naming the method."""
    from ketch.udf.methods import annotated_dtype, method_spec

    options = spec.options
    mark = method_spec(spec.cls, method)
    row_wise = not mark.batch if mark is not None else options.return_dtype is None
    dtype: Any = mark.return_dtype if mark is not None else None
    if dtype is None and generator:
        dtype = options.return_dtype or _hinted_dtype(getattr(spec.cls, method), True)
    if dtype is None:
        dtype = options.return_dtype or annotated_dtype(spec.cls, method)
    if dtype is None:
        raise TypeError(f"@ketch.cls method {name} needs return_dtype= (or a return annotation)")
    changes: dict[str, Any] = {"return_dtype": DataType._infer(dtype)}
    if mark is not None:
        if mark.batch_size is not None:
            changes["batch_size"] = mark.batch_size
        if mark.max_retries is not None:
            changes["max_retries"] = mark.max_retries
        if mark.on_error is not None:
            changes["on_error"] = mark.on_error
    options = dataclasses.replace(options, **changes)
    _check_positive("batch_size", options.batch_size)
    if not isinstance(options.max_retries, int) or options.max_retries < 0:
        raise ValueError(f"max_retries must be an int >= 0, got {options.max_retries!r}")
    if options.on_error not in ("raise", "log", "ignore"):
        raise ValueError(f"on_error must be 'raise', 'log' or 'ignore', got {options.on_error!r}")
    if options.use_process and not _arrow_representable(options.return_dtype):
        raise TypeError(f"@ketch.cls method {name}: use_process=True needs an Arrow return_dtype")
    return options, row_wise


class _ClassUdf:
    def __init__(self, cls: type, options: _Options) -> None:
        self.cls = cls
        self.options = _check_options(cls.__name__, options)  # return_dtype None: per method
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
    cpus: float | None = None,
    gpus: float = 0,
    memory_bytes: int | None = None,
    num_cpus: float | None = None,
    num_gpus: float | None = None,
    max_retries: int = 0,
    on_error: str = "raise",
    use_process: bool | None = None,
    timeout_s: float | None = None,
    ray_options: dict[str, Any] | None = None,
) -> Any:
    """Decorates a class as a stateful batch UDF: ``Model(args)`` binds ``__init__``'s arguments;
    ``__init__`` runs once per instance on the instance's worker: in thread mode lazily, on the
    first batch that finds no idle instance; in process mode all ``concurrency`` worker processes
    start together (forked from a pre-imported zygote) when the UDF's first batch arrives and run
    ``__init__`` at once, in parallel, each batch going to the first ready worker (see
    ``ketch.execution.process_pool``); ``model(col(...))`` / ``model.method(col(...))`` call
    the method on batches of ``batch_size`` rows (Series arguments).

    ``concurrency`` (alias ``max_concurrency``): most instances at once; by default one per GPU
    share (``gpus``) or per ``cpus``, else 1. ``gpus`` may be fractional (0.5: two instances per
    GPU); asking for more GPUs than the machine has raises ValueError at plan time. ``num_cpus`` /
    ``num_gpus`` are the legacy spellings. ``max_retries`` / ``on_error`` ("raise" | "log" |
    "ignore") / ``timeout_s`` as for :func:`func`. Without ``batch_size`` a call gets up to 131,072
    rows (fewer when a small input must be spread over the instances). ``use_process``: None
    (default) runs the instances in worker processes when the return dtype is Arrow-representable
    and the class and its arguments can be pickled (as Daft does), else on threads; True insists
    (an unpicklable class raises TypeError at plan time); False keeps them on the engine's threads
    (shared state, no IPC copy per batch).

    On the Ray runner, a class with ``concurrency`` or ``gpus`` runs as a pool of Ray actors, one
    instance each (``ketch.runners.ray.actor_pool``): ``cpus`` (default: none held), ``gpus`` and
    ``memory_bytes`` become each actor's Ray resources and ``ray_options`` (a dict of Ray actor
    options, e.g. ``{"resources": {"accel": 1}}`` or ``{"runtime_env": ...}``) is passed to
    ``ray.remote(...).options``; GPU requests are then checked against the cluster, not this
    machine."""

    def wrap(c: type) -> _ClassUdf:
        dtype = DataType._infer(return_dtype) if return_dtype is not None else None
        if use_process and dtype is not None and not _arrow_representable(dtype):
            raise TypeError(
                f"@ketch.cls on {c.__name__}: use_process=True needs an Arrow return_dtype, got {dtype!r}"
            )
        options = _Options(
            dtype,
            batch_size=batch_size,
            concurrency=concurrency if concurrency is not None else max_concurrency,
            num_cpus=cpus if cpus is not None else num_cpus,
            num_gpus=gpus or num_gpus or 0,
            memory_bytes=memory_bytes,
            max_retries=max_retries,
            on_error=on_error,
            use_process=use_process,
            timeout_s=timeout_s,
            ray_options=ray_options,
        )
        if use_process is not False and (dtype is None or _arrow_representable(dtype)):
            _prestart_workers()
        return _ClassUdf(c, options)

    return wrap(class_) if class_ is not None else wrap


class _FunctionUdf(LegacyUdfOptions):
    def __init__(self, func: Callable[..., Any], options: _Options, kind: str, unnest: bool = False) -> None:
        self.func = func
        self.options = _check_options(getattr(func, "__name__", "udf"), options)
        self.kind = kind  # "batch", "row", "async", "generator"
        self.unnest = unnest  # the struct result as one column per field
        functools.update_wrapper(self, func)

    def _with_options(self, **changes: Any) -> _FunctionUdf:
        return _FunctionUdf(self.func, replace_options(self.options, **changes), self.kind, self.unnest)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not any(isinstance(a, Expression) for a in (*args, *kwargs.values())):
            return self.func(*args, **kwargs)  # plain Python values: an ordinary call
        # Expressions are the columns; other arguments reach the function as they are (Daft).
        func, args = bind_call(self.func, args, kwargs)  # type: ignore[assignment]
        o = self.options
        common = {"max_retries": o.max_retries, "on_error": o.on_error, "timeout_s": o.timeout_s}
        name = self.func.__name__
        if self.kind == "batch":
            runner: _Runner = _BatchFunctionRunner(name, o.return_dtype, func, **common)
        elif self.kind == "async":
            runner = _AsyncRowRunner(
                name,
                o.return_dtype,
                func,
                max_concurrency=o.concurrency or _ASYNC_MAX_CONCURRENCY,
                **common,
            )
        elif self.kind == "generator":
            list_type = DataType(pa.large_list(o.return_dtype.to_arrow()))
            runner = _GeneratorRunner(name, list_type, func, **common)
        else:
            runner = _RowFunctionRunner(name, o.return_dtype, func, **common)
        # async rows share one event loop (max_concurrency bounds the coroutines there); the other
        # forms use `concurrency` threads.
        options = o if self.kind != "async" else dataclasses.replace(o, concurrency=None, is_async=True)
        expression = _udf_expression(runner, args, options, False, explode=self.kind == "generator")
        return expression.unnest() if self.unnest else expression


def _hinted_dtype(func: Callable[..., Any], generator: bool) -> DataType | None:
    """return_dtype from the function's return annotation (int, float, str, bool, bytes,
    list[...], Iterator[T] / Generator[T, ...] for generators)."""
    try:
        hint = typing.get_type_hints(func).get("return")
    except Exception:  # noqa: BLE001
        return None
    if hint is None:
        return None
    if generator:
        args = typing.get_args(hint)
        if not args:
            return None
        hint = args[0]
    return _dtype_from_hint(hint)


def _dtype_from_hint(hint: Any) -> DataType | None:
    from ketch.file import File

    if hint is File:
        return DataType.file()
    origin = typing.get_origin(hint)
    if origin in (list, typing.List):  # noqa: UP006
        (item,) = typing.get_args(hint) or (None,)
        inner = _dtype_from_hint(item) if item is not None else None
        return DataType.list(inner) if inner is not None else None
    try:
        return DataType._infer(hint)
    except TypeError:
        return None


def func(
    fn: Callable[..., Any] | None = None,
    *,
    return_dtype: Any = None,
    unnest: bool = False,
    batch: bool = False,
    batch_size: int | None = None,
    max_concurrency: int | None = None,
    cpus: float | None = None,
    gpus: float = 0,
    memory_bytes: int | None = None,
    max_retries: int = 0,
    on_error: str = "raise",
    use_process: bool | None = None,
    timeout_s: float | None = None,
) -> Any:
    """Decorates a function as a UDF (Daft's ``@daft.func``). Called with expressions it builds a
    plan node; called with plain values it just runs.

    - Row-wise (default): scalar arguments, one call per row; ``return_dtype`` from the return
      annotation when not given.
    - ``async def``: the rows of all batches in flight run concurrently on one event loop,
      ``max_concurrency`` (default 1,024) at most awaiting at once.
    - Generator (``yield``): one row in, any number out — the other columns repeat; a row whose
      generator yields nothing gives one row with null there (Daft's rule). ``return_dtype`` is
      the element type.
    - ``batch=True`` (or ``@ketch.func.batch``): Series arguments, one call per batch of
      ``batch_size`` rows; must return one value per row (a wrong length names the UDF).
    - ``unnest=True``: the struct the function returns becomes one column per field in
      ``select`` / ``with_columns`` (``return_dtype`` must be ``DataType.struct(...)``: ValueError
      otherwise, as Daft).

    ``max_retries``: a failing call (a row, or a batch) is retried that many times; then
    ``on_error`` "raise" fails the query with UDFError (the original exception as ``__cause__``,
    its traceback kept), "log" logs it and yields null, "ignore" yields null. ``timeout_s``: a call
    (a row, or a batch) running longer fails with TimeoutError naming the UDF and its source rows,
    then ``max_retries`` / ``on_error`` apply (thread mode abandons the call's thread; it finishes in
    the background). ``max_concurrency`` on a sync function: that many calls at once, each on a
    thread of its own (rows are spread over them; they share the GIL, so it helps functions that
    wait on I/O or release the GIL; use ``use_process=True`` for CPU-bound Python). Without
    ``batch_size``, a call gets up to 512 rows (row-wise) or 131,072 (``batch=True``).
    ``use_process=True`` runs the calls in worker processes (``ketch.execution.process_pool``);
    Ctrl-C stops a query within about a second in every mode (worker processes are killed,
    thread-mode calls abandoned)."""

    def wrap(f: Callable[..., Any]) -> _FunctionUdf:
        is_async = inspect.iscoroutinefunction(f)
        is_generator = inspect.isgeneratorfunction(f)
        kind = "batch" if batch else "async" if is_async else "generator" if is_generator else "row"
        dtype = return_dtype
        if dtype is None and not batch:
            dtype = _hinted_dtype(f, is_generator)
        if dtype is None:
            raise TypeError(f"@ketch.func on {f.__name__} needs return_dtype= (or a return annotation)")
        check_unnest(unnest, dtype)
        options = _Options(
            DataType._infer(dtype),
            batch_size=batch_size,
            concurrency=max_concurrency,
            num_cpus=cpus,
            num_gpus=gpus,
            memory_bytes=memory_bytes,
            max_retries=max_retries,
            on_error=on_error,
            use_process=use_process,
            timeout_s=timeout_s,
        )
        if use_process:
            _prestart_workers()
        return _FunctionUdf(f, options, kind, unnest)

    return wrap(fn) if fn is not None else wrap


def udf(
    *,
    return_dtype: Any,
    batch_size: int | None = None,
    concurrency: int | None = None,
    num_cpus: float | None = None,
    num_gpus: float | None = None,
    memory_bytes: int | None = None,
    use_process: bool | None = None,
    timeout_s: float | None = None,
    ray_options: dict[str, Any] | None = None,
    max_concurrency: int | None = None,
) -> Any:
    """Legacy decorator: a batch function ``f(*Series) -> Series | array | list``, or a class whose
    ``__call__`` takes Series (instances made from ``__init__`` without arguments). On the Ray
    runner a class with ``concurrency`` or ``num_gpus`` runs as a pool of Ray actors (see
    :func:`cls`; ``ray_options`` as there). ``max_concurrency`` is Daft's newer name for
    ``concurrency`` (ValueError when both are given and differ)."""
    if concurrency is not None and max_concurrency is not None and concurrency != max_concurrency:
        raise ValueError(
            f"@ketch.udf: concurrency={concurrency!r} and max_concurrency={max_concurrency!r} disagree"
        )

    def wrap(target: Any) -> Any:
        options = _Options(
            DataType._infer(return_dtype),
            batch_size=batch_size,
            concurrency=concurrency if concurrency is not None else max_concurrency,
            num_cpus=num_cpus,
            num_gpus=num_gpus or 0,
            memory_bytes=memory_bytes,
            use_process=use_process,
            timeout_s=timeout_s,
            ray_options=ray_options,
        )
        if use_process or (use_process is None and isinstance(target, type)):
            _prestart_workers()
        if isinstance(target, type):
            return _ClassUdf(target, options)()
        return _FunctionUdf(target, options, "batch")

    return wrap


func.batch = functools.partial(func, batch=True)  # type: ignore[attr-defined]
