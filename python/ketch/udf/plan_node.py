"""A UDF call → the UDF plan node: picks thread or process mode (a class that can be pickled runs
in worker processes, as in Daft), starts the process pool or asks for a Ray actor pool, and
hands the runner to the native ``_core.udf`` expression with its explain properties."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import cloudpickle

from ketch import _core
from ketch.datatype import DataType
from ketch.expressions.expression import Expression, _expr
from ketch.udf.errors import _log
from ketch.udf.options import (
    _ASYNC_WORKER_THREADS,
    _DEFAULT_BATCH_ROWS,
    _DEFAULT_ROW_WISE_BATCH_ROWS,
    _arrow_representable,
    _Options,
)
from ketch.udf.runners import _RowFunctionRunner, _Runner


def _udf_expression(
    runner: _Runner, args: tuple[Any, ...], options: _Options, is_class: bool, explode: bool = False
) -> Expression:
    natives = [_expr(a)._native for a in args]
    runner.batch_size = int(options.batch_size or 0)
    use_process = bool(options.use_process)
    payload = b""
    if options.use_process is None and is_class and _arrow_representable(runner.dtype):
        # Class UDFs default to worker processes, as in Daft, when they can travel there; one
        # that cannot be pickled (it holds a lock, a socket...) stays in thread mode.
        try:
            payload = cloudpickle.dumps(runner.worker_factory())
            use_process = True
        except Exception as exc:  # noqa: BLE001
            _log.debug("UDF '%s' runs in thread mode: it cannot be pickled (%s)", runner.name, exc)
            _stop_prestarted_zygote()
    elif use_process:
        try:
            payload = cloudpickle.dumps(runner.worker_factory())
        except Exception as exc:
            _stop_prestarted_zygote()
            raise TypeError(
                f"UDF '{runner.name}' cannot run in a worker process (use_process=True): "
                f"it cannot be pickled: {type(exc).__name__}: {exc}"
            ) from exc
    concurrency = options.concurrency or (os.cpu_count() or 1 if use_process else 1 if is_class else 0)
    if options.is_async:
        concurrency = _ASYNC_WORKER_THREADS  # the coroutines' own bound is max_concurrency
    if use_process:
        from ketch.execution.process_pool import ProcessPool

        runner.process = ProcessPool(payload, runner.name, concurrency, float(options.num_gpus or 0))
    if (
        is_class
        and not options.is_async
        and (options.concurrency_given or options.num_gpus)
        and _arrow_representable(runner.dtype)
    ):
        from ketch.runners.ray.actor_pool import ActorRequest

        runner.actor_request = ActorRequest(
            concurrency=options.concurrency if options.concurrency_given else None,
            num_cpus=options.num_cpus,
            num_gpus=float(options.num_gpus or 0),
            memory_bytes=options.memory_bytes,
            ray_options=dict(options.ray_options or {}),
        )
    properties = {
        "async": options.is_async,
        "use_process": use_process,
        "num_cpus": options.num_cpus,
        "num_gpus": options.num_gpus,
        "memory_bytes": options.memory_bytes,
        "max_retries": options.max_retries,
        "on_error": options.on_error,
    }
    if options.timeout_s is not None:
        properties["timeout_s"] = options.timeout_s
    # One batch per engine → runner call (and per round trip to a worker process): a stage with
    # several workers hands each batch to whichever is idle, and the next stage starts on the
    # first finished batch.
    call_rows = int(options.batch_size or 0)
    row_wise = isinstance(runner, _RowFunctionRunner)
    default_rows = 0 if call_rows else _DEFAULT_ROW_WISE_BATCH_ROWS if row_wise else _DEFAULT_BATCH_ROWS
    properties["batch_size"] = options.batch_size if options.batch_size else "morsel"
    # Prefix bucketing (the AI prompt UDFs): the class names how many leading arguments group rows.
    bucket_key_args = int(getattr(getattr(runner, "cls", None), "bucket_key_args", 0) or 0)
    if bucket_key_args:
        properties["bucket_by"] = getattr(runner.cls, "bucket_by_display", f"arguments 1..{bucket_key_args}")
    native = _core.udf(
        runner.name,
        runner,
        natives,
        runner.dtype.to_arrow(),
        call_rows,
        default_rows,
        int(concurrency),
        is_class,
        explode,  # a generator: its list is exploded above (a limit there caps its items per row)
        {
            k: ("None" if v is None else str(v).lower() if isinstance(v, bool) else str(v))
            for k, v in properties.items()
        },
        bucket_key_args,
    )
    out = Expression(native, explode)
    # GroupedDataFrame.map_groups calls the runner itself, once per group (grouped_udfs.py).
    out._udf_call = (runner, [_expr(a) for a in args])
    return out


def row_wise_expression(func: Callable[..., Any], args: list[Expression], dtype: DataType) -> Expression:
    name = getattr(func, "__name__", "apply")
    return _udf_expression(_RowFunctionRunner(name, dtype, func), tuple(args), _Options(dtype), False)


def _stop_prestarted_zygote() -> None:
    """The UDF whose declaration prestarted the zygote cannot run in processes after all: stop the
    zygote unless a pool uses it (a later process-mode query starts it again)."""
    from ketch.execution.process_pool import _stop_zygote_if_unused

    _stop_zygote_if_unused()


def _prestart_workers() -> None:
    """A process-mode UDF was declared: the zygote its worker processes fork from starts now, in
    the background, so a query's workers start in milliseconds (it runs no user code)."""
    from ketch.execution.process_pool import prestart

    prestart()
