"""Python UDFs as native plan nodes.

A UDF call becomes a UDF expression in the plan; the executor runs projects that contain one on
threads of their own (``concurrency`` of them), never on the compute pool. Each call receives one
batch (``batch_size`` rows, or the morsel) as :class:`ketch.Series` arguments.

- ``@ketch.cls(return_dtype=..., batch_size=..., concurrency=...)`` on a class: ``Model(args)``
  binds constructor arguments without running ``__init__``; ``__init__`` runs once per instance, at
  most ``concurrency`` instances, created lazily on the UDF's threads (in process mode: all of
  them, in their worker processes, when the first batch arrives); ``model(col(...))`` calls
  ``__call__`` on batches.
- ``@ketch.udf(return_dtype=..., batch_size=..., concurrency=...)``: the legacy decorator, on a
  batch function or a class with ``__call__``.
- ``Expression.apply(func, return_dtype)``: a row-wise Python function.

Errors raised by user code surface as :class:`ketch.errors.UDFError` naming the UDF, with the
original exception (and its traceback) as ``__cause__``.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import inspect
import itertools
import logging
import os
import queue
import sys
import threading
import time
import traceback
import typing
from collections.abc import Callable
from typing import Any

import cloudpickle
import numpy as np
import pyarrow as pa

from ketch import _core, large_arrays, udf_metrics
from ketch.datatype import DataType
from ketch.errors import RetryAfterError, UDFError
from ketch.execution.call_threads import (
    CallCancelled,
    CallThreads,
    CallTimedOut,
    current_call_abandoned,
    restart_call_clock,
)
from ketch.expressions.expression import Expression, _expr
from ketch.io.redact import RedactingFilter
from ketch.series import Series, to_pylist
from ketch.udf_binding import LegacyUdfOptions, bind_call, replace_options
from ketch.udf_methods import check_unnest

# Exceptions raised inside UDFs, kept until the query's error reaches Python (keyed by a token that
# travels in the native error message).
_errors: dict[int, BaseException] = {}
_error_ids = itertools.count(1)
_errors_lock = threading.Lock()
_TOKEN = "[ketch-udf-error:"


def _stash(exc: BaseException) -> str:
    # The frames of the traceback keep their locals (the UDF's runner, its process pool and
    # workers) alive for as long as the exception is stashed, and a failed query may stash errors
    # that are never re-raised: their locals are cleared (file and line of every entry survive).
    # The stasher's own frame is still running; it drops its references itself.
    traceback.clear_frames(exc.__traceback__)
    with _errors_lock:
        token = next(_error_ids)
        _errors[token] = exc
        # The process id tells a token stashed here from one that came with an error from another
        # process (an engine worker of the Ray runner): only this process's can be looked up.
        return f"{os.getpid()}:{token}"


def reraise_udf_error(error: BaseException) -> None:
    """Turns a native error that carries a UDF token into UDFError(...) from the original exception."""
    message = str(error)
    start = message.find(_TOKEN)
    if start < 0:
        return
    end = message.find("]", start)
    pid, _, number = message[start + len(_TOKEN) : end].partition(":")
    with _errors_lock:
        original = _errors.pop(int(number), None) if pid == str(os.getpid()) and number.isdigit() else None
        # Other batches of a failed query may have stashed errors too (never reported): keep the
        # stash bounded without dropping errors other queries are about to re-raise.
        while len(_errors) > 1024:
            _errors.pop(next(iter(_errors)))
    clean = (message[:start].rstrip() + " " + message[end + 1 :].lstrip()).strip()
    raise UDFError(clean) from original


def _to_arrow_result(result: Any, dtype: DataType, num_rows: int, name: str) -> pa.Array:
    if dtype.extension_name == "ketch.python" and not isinstance(result, (Series, pa.Array, pa.ChunkedArray)):
        from ketch.pytype import python_array

        values = list(result)
        if len(values) != num_rows:
            raise ValueError(f"UDF '{name}' returned {len(values)} values for a batch of {num_rows} rows")
        return python_array(values)
    if dtype.extension_name == "ketch.file" and not isinstance(result, (Series, pa.Array, pa.ChunkedArray)):
        from ketch.file import files_to_arrow

        values = list(result)
        if len(values) != num_rows:
            raise ValueError(f"UDF '{name}' returned {len(values)} values for a batch of {num_rows} rows")
        return files_to_arrow(values)
    if dtype.is_image() or dtype.is_fixed_shape_image() or dtype.extension_name == "arrow.fixed_shape_tensor":
        if not isinstance(result, (Series, pa.Array, pa.ChunkedArray)):
            from ketch.convert import images_to_arrow, tensors_to_arrow

            values = list(result) if not isinstance(result, np.ndarray) else result
            if len(values) != num_rows:
                raise ValueError(f"UDF '{name}' returned {len(values)} values for a batch of {num_rows} rows")
            if dtype.extension_name == "arrow.fixed_shape_tensor":
                return tensors_to_arrow(values, dtype)
            return images_to_arrow(values, dtype)
    from ketch.tensor_values import is_variable_tensor, variable_tensors_to_arrow

    if is_variable_tensor(dtype.to_arrow()) and not isinstance(result, (Series, pa.Array, pa.ChunkedArray)):
        values = list(result)
        if len(values) != num_rows:
            raise ValueError(f"UDF '{name}' returned {len(values)} values for a batch of {num_rows} rows")
        try:
            return variable_tensors_to_arrow(values, dtype.to_arrow())
        except TypeError as exc:
            raise TypeError(f"UDF '{name}' returned values that are not {dtype!r}: {exc}") from exc
    if isinstance(result, Series):
        array = result.to_arrow()
    elif isinstance(result, pa.ChunkedArray):
        array = large_arrays.combine(result)  # over 2 GiB: as the large variant, cast below
    elif isinstance(result, pa.Array):
        array = result
    elif isinstance(result, np.ndarray) and result.ndim == 1:
        array = pa.array(result)
    elif isinstance(result, (list, tuple, np.ndarray)):
        # Untyped first, then a safe cast below: 1.7 for an int64 UDF is an error, not 1.
        array = large_arrays.from_values(list(result), dtype.to_arrow())
    else:
        raise TypeError(
            f"UDF '{name}' must return a Series, pyarrow array, numpy array or list, "
            f"got {type(result).__name__}"
        )
    if isinstance(array, pa.ChunkedArray):  # pa.array over a numpy array of 2 GiB of bytes
        array = large_arrays.combine(array)
    if len(array) != num_rows:
        raise ValueError(f"UDF '{name}' returned {len(array)} values for a batch of {num_rows} rows")
    if array.type != dtype.to_arrow():
        try:
            array = array.cast(dtype.to_arrow(), safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowCapacityError) as exc:
            too_large = large_arrays.overflow_message(name, array, dtype.to_arrow(), num_rows)
            if too_large is not None:
                raise ValueError(too_large) from exc
            raise TypeError(
                f"UDF '{name}' returned {array.type}, which cannot be cast to its "
                f"return_dtype {dtype!r}: {exc}"
            ) from exc
    return array


def _nulls(dtype: DataType, num_rows: int) -> pa.Array:
    arrow_type = dtype.to_arrow()
    if isinstance(arrow_type, pa.ExtensionType):
        return pa.ExtensionArray.from_storage(arrow_type, pa.nulls(num_rows, arrow_type.storage_type))
    return pa.nulls(num_rows, arrow_type)


_log = logging.getLogger("ketch.udf")

_log.addFilter(RedactingFilter())  # on_error="log" warnings carry exception text: URLs with credentials

# The longest pause a RetryAfterError may ask for between two attempts (seconds).
_MAX_RETRY_AFTER_S = 300.0


def _retry_pause(exc: BaseException) -> float:
    """Seconds to wait before retrying after `exc`: a RetryAfterError's `retry_after` (clamped to
    [0, 300]), else 0 (retry at once)."""
    if isinstance(exc, RetryAfterError):
        try:
            return min(max(float(exc.retry_after), 0.0), _MAX_RETRY_AFTER_S)
        except (TypeError, ValueError):
            return 0.0
    return 0.0


# Generator UDFs: most items to take from each row's generator in the current call (-1: all); set by
# the engine when a limit above the explode makes later items useless. A context variable, so it
# follows the call onto call threads (CallThreads copies the context) and into worker processes.
_MAX_ITEMS: contextvars.ContextVar[int] = contextvars.ContextVar("ketch_generator_max_items", default=-1)


class _Runner:
    """Called by the native executor with the GIL held: (list of pyarrow arrays, num_rows) → array.

    A failing batch is retried ``max_retries`` times; then ``on_error`` decides: "raise" (the
    query fails with UDFError from the original exception), "log" (a warning with the traceback,
    nulls for the batch) or "ignore" (nulls). ``process``: a ProcessPool that runs the batches in
    worker processes instead of this thread."""

    def __init__(
        self,
        name: str,
        dtype: DataType,
        max_retries: int = 0,
        on_error: str = "raise",
        timeout_s: float | None = None,
    ) -> None:
        self.name = name
        self.dtype = dtype
        self.max_retries = max_retries
        self.on_error = on_error
        self.timeout_s = timeout_s
        self.process: Any = None
        self.batch_size = 0  # rows per user-function call (set with the plan node)
        # On the Ray runner: what a class UDF's actor pool asks for (an ActorRequest, None: the
        # UDF runs inside the engine workers) and, while a query runs, the client that sends its
        # batches to the pool's actors (ketch.runners.ray.actor_pool).
        self.actor_request: Any = None
        self.actor_pool: Any = None
        self._init_runtime()

    # Plan serialization (ketch.distributed serde) sends a runner as cloudpickle bytes. What it
    # holds at run time (call threads, worker processes, event loop, class instances) stays behind:
    # the copy makes its own on first use (a process-mode UDF gets a fresh pool of workers).
    _RUNTIME_STATE: tuple[str, ...] = ("_threads", "process")

    def _init_runtime(self) -> None:
        self._threads = CallThreads(self.name)  # where thread-mode calls run (so waits can be abandoned)

    def __getstate__(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in self._RUNTIME_STATE}
        if self.process is not None:
            pool = self.process
            state["_process_spec"] = (pool.payload, pool.udf_name, pool.concurrency, pool.gpus)
        return state  # a deferred _process_spec (see __setstate__) travels on as it came

    def __setstate__(self, state: dict[str, Any]) -> None:
        spec = state.pop("_process_spec", None)
        self.__dict__.update(state)
        self._init_runtime()
        self.process = None
        if spec is not None and state.get("actor_pool") is not None:
            self._process_spec = spec  # its batches go to Ray actors: no local pool (nor zygote)
        elif spec is not None:
            from ketch.execution.process_pool import ProcessPool

            self.process = ProcessPool(*spec)

    def _timed(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` under ``timeout_s`` (on a call thread of its own), or just ``fn()``."""
        if self.timeout_s is None:
            return fn()
        try:
            return self._threads.run(fn, None, self.timeout_s)
        except CallTimedOut:
            self.call_abandoned()
            raise CallTimedOut(
                f"UDF '{self.name}' call ran longer than timeout_s={self.timeout_s:g}"
            ) from None

    def invoke(self, args: list[pa.Array], num_rows: int) -> Any:
        raise NotImplementedError

    def convert(self, args: list[pa.Array], num_rows: int) -> pa.Array:
        with udf_metrics.recording(self.name):  # ketch.udf.metrics counters count for this UDF
            result = self.invoke(args, num_rows)
        return _to_arrow_result(result, self.dtype, num_rows, self.name)

    def __call__(
        self,
        args: list[pa.Array],
        num_rows: int,
        cancelled: Callable[[], bool] | None = None,
        max_items: int = -1,
    ) -> pa.Array:
        """Called by the engine (its UDF worker thread, GIL held): waits for the batch while
        polling ``cancelled()``, and abandons it (thread mode) or kills its worker process when
        the query is cancelled, so Ctrl-C never waits for a sleeping or blocked UDF."""
        _MAX_ITEMS.set(max_items)  # every call sets it (this engine thread runs calls of this UDF only)
        try:
            actor_pool = getattr(self, "actor_pool", None)
            if actor_pool is not None:
                # Retries, on_error and timeout_s run in the actor, per batch_size slice.
                return actor_pool.call(args, num_rows, cancelled)
            if self.process is not None:
                # Retries and on_error run in the worker, per batch_size slice.
                return self.process.call(args, num_rows, cancelled, max_items)
            return self._threads.run(functools.partial(self.policy_call, args, num_rows), cancelled, None)
        except CallCancelled:
            message = f"UDF '{self.name}' was stopped: the query was cancelled"
        except BaseException as exc:  # KeyboardInterrupt / SystemExit raised by user code too
            token = _stash(exc)
            message = f"UDF '{self.name}' failed: {type(exc).__name__}: {exc} {_TOKEN}{token}]"
        # Only after a failure. The stashed exception's frames link back to this one (f_back): it
        # must not keep the runner, and so its process pool and workers, alive.
        del self, args
        raise RuntimeError(message)

    per_row = False

    def can_stream(self) -> bool:
        """True when the engine may pull this UDF's items lazily (``start_stream``): generators."""
        return False

    def start_stream(
        self, args: list[pa.Array], num_rows: int, cancelled: Callable[[], bool] | None, max_items: int
    ) -> Any:
        return None

    def call_abandoned(self) -> None:
        """A call was given up while it still runs (timeout_s): free what it holds."""

    def policy_call(self, args: list[pa.Array], num_rows: int) -> pa.Array:
        """One batch under the retry / on_error policy; raises the UDF's own exception. Row-wise
        runners apply the policy per row themselves (only the failing row is retried)."""
        attempt = 0
        retries = 0 if self.per_row else self.max_retries
        while True:
            try:
                if self.per_row:  # timeout_s applies to each row (_call_row)
                    return self.convert(args, num_rows)
                return self._timed(lambda: self.convert(args, num_rows))
            except Exception as exc:
                if self.per_row and self.on_error != "raise":
                    raise  # a failure outside the rows (e.g. converting the results)
                if attempt < retries:
                    attempt += 1
                    time.sleep(_retry_pause(exc))
                    continue
                if self.on_error == "log":
                    _log.warning(
                        "UDF '%s' failed on a batch of %d rows after %d attempt(s); yielding nulls",
                        self.name,
                        num_rows,
                        attempt + 1,
                        exc_info=exc,
                    )
                if self.on_error in ("log", "ignore"):
                    return _nulls(self.dtype, num_rows)
                raise

    def worker_factory(self) -> Callable[[], Callable[[list[pa.Array], int], pa.Array]]:
        """A picklable zero-argument factory that builds this UDF's batch call in a worker
        process (class UDFs: one instance, made there)."""
        raise NotImplementedError


def _sliced(runner: _Runner, batch_size: int) -> Callable[[list[pa.Array], int], pa.Array]:
    """A worker process's call: the UDF sees at most ``batch_size`` rows per call (the engine sends
    one batch per round trip, so idle workers take the next batch), each call under its retry /
    on_error policy."""

    def call(args: list[pa.Array], num_rows: int) -> pa.Array:
        if batch_size <= 0 or num_rows <= batch_size:
            return runner.policy_call(args, num_rows)
        parts = []
        for start in range(0, num_rows, batch_size):
            n = min(batch_size, num_rows - start)
            parts.append(runner.policy_call([a.slice(start, n) for a in args], n))
        try:
            return pa.concat_arrays(parts)
        except (pa.ArrowInvalid, pa.ArrowCapacityError) as exc:
            # Each call fit its 32-bit-offset return type; together they do not.
            too_large = large_arrays.overflow_message(
                runner.name, pa.chunked_array(parts), runner.dtype.to_arrow(), num_rows
            )
            if too_large is None:
                raise
            raise ValueError(too_large) from exc

    call.runner = runner  # type: ignore[attr-defined]  (a worker process streams generators through it)
    return call


def _function_call_factory(
    runner_type: type, name: str, dtype: DataType, func: Callable[..., Any], extra: dict, batch_size: int
) -> Callable[[list[pa.Array], int], pa.Array]:
    return _sliced(runner_type(name, dtype, func, **extra), batch_size)


def _function_worker_factory(runner: Any, extra: dict) -> Any:
    """The worker-process factory of a function runner: the same runner type, options and batch
    size, rebuilt in the worker (``extra``: the runner type's own constructor options)."""
    options = {
        "max_retries": runner.max_retries,
        "on_error": runner.on_error,
        "timeout_s": runner.timeout_s,
        **extra,
    }
    return functools.partial(
        _function_call_factory,
        type(runner),
        runner.name,
        runner.dtype,
        runner.func,
        options,
        runner.batch_size,
    )


def _instance_call_factory(
    name: str,
    dtype: DataType,
    cls: type,
    init_args: tuple,
    init_kwargs: dict,
    method: str,
    extra: dict,
    batch_size: int,
) -> Callable[[list[pa.Array], int], pa.Array]:
    runner = _InstancePoolRunner(name, dtype, cls, init_args, init_kwargs, method, 1, **extra)
    runner.prepare()  # __init__ now, as the worker starts: not on its first batch
    return _sliced(runner, batch_size)


class _BatchFunctionRunner(_Runner):
    def __init__(self, name: str, dtype: DataType, func: Callable[..., Any], **options: Any) -> None:
        super().__init__(name, dtype, **options)
        self.func = func

    def invoke(self, args: list[pa.Array], num_rows: int) -> Any:
        return self.func(*[Series(a) for a in args])

    def worker_factory(self) -> Any:
        return _function_worker_factory(self, {})


class _RowFunctionRunner(_Runner):
    """Row-wise: the function gets one row's Python values. With on_error other than "raise",
    failures are per row: a failing row (after its retries) is null, the others keep their values."""

    def __init__(self, name: str, dtype: DataType, func: Callable[..., Any], **options: Any) -> None:
        super().__init__(name, dtype, **options)
        self.func = func

    per_row = True  # retries and on_error apply to each row, not to the batch

    def _evaluate(self, row: tuple) -> Any:
        return self.func(*row)

    def _call_row(self, row: tuple) -> Any:
        for attempt in range(self.max_retries + 1):
            try:
                return self._timed(lambda: self._evaluate(row))
            except Exception as exc:
                if attempt < self.max_retries:
                    time.sleep(_retry_pause(exc))
                    continue
                return self._row_failed(exc)
        return None

    def _row_failed(self, exc: Exception) -> None:
        """A row's last attempt failed (called from its ``except`` block): re-raises the exception
        with on_error="raise", else yields null ("log" logs it first)."""
        if self.on_error == "raise":
            raise  # noqa: PLE0704 - the exception being handled by the caller
        if self.on_error == "log":
            _log.warning("UDF '%s' failed on a row; yielding null", self.name, exc_info=exc)

    def _rows(self, args: list[pa.Array]) -> list[tuple]:
        return list(zip(*[to_pylist(a) for a in args], strict=True))

    def invoke(self, args: list[pa.Array], num_rows: int) -> Any:
        results = [self._call_row(row) for row in self._rows(args)]
        if self.dtype.extension_name is not None or isinstance(self.dtype.to_arrow(), pa.StructType):
            # Python objects, images, tensors (variable-shape ones are structs), structs:
            # converted by _to_arrow_result
            return results
        try:
            # Then a safe cast to the dtype (1.7 for int64 is an error); values over 2 GiB come
            # back as the large variant (large_binary...), never as a ChunkedArray.
            return large_arrays.from_values(results, self.dtype.to_arrow())
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            try:
                return pa.array(results, type=self.dtype.to_arrow())  # maps, unions...
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as exc:
                raise TypeError(
                    f"UDF '{self.name}' returned values that are not {self.dtype!r}: {exc}"
                ) from exc

    def worker_factory(self) -> Any:
        return _function_worker_factory(self, {})


class _GeneratorRunner(_RowFunctionRunner):
    """A generator function: each row's yielded values become one list (exploded into rows by
    the DataFrame)."""

    def _evaluate(self, row: tuple) -> Any:
        items = self.func(*row)
        limit = _MAX_ITEMS.get()
        if limit < 0:
            return list(items)
        try:  # a limit above needs no more than `limit` items of any row: stop pulling there
            return list(itertools.islice(items, limit))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    def _call_row(self, row: tuple) -> Any:
        out = super()._call_row(row)
        return out or None  # nothing yielded (or a failed row under on_error log/ignore): a null row

    def invoke(self, args: list[pa.Array], num_rows: int) -> Any:
        return [self._call_row(row) for row in self._rows(args)]

    def can_stream(self) -> bool:
        # Under timeout_s (which bounds a row's whole generator) a call takes every item at once.
        return self.timeout_s is None

    def start_stream(
        self, args: list[pa.Array], num_rows: int, cancelled: Callable[[], bool] | None, max_items: int
    ) -> _EngineStream | None:
        if not self.can_stream():
            return None
        if self.process is not None:
            pool = self.process
            started: list[Any] = []  # its worker starts the stream on the first pull

            def pull_from_worker(max_items_now: int, max_bytes: int) -> tuple[int, pa.Array, bool]:
                if not started:
                    started.append(pool.start_stream(args, num_rows, cancelled, max_items))
                return started[0].next(max_items_now, max_bytes, cancelled)

            def close_worker_stream() -> None:
                if started:
                    started[0].close()

            return _EngineStream(self.name, pull_from_worker, close_worker_stream)
        stream = _GeneratorStream(self, self._rows(args), max_items)

        def pull(max_items: int, max_bytes: int) -> tuple[int, pa.Array, bool]:
            return self._threads.run(functools.partial(stream.pull, max_items, max_bytes), cancelled, None)

        return _EngineStream(self.name, pull, stream.close)


def _item_bytes(item: Any) -> int:
    """About what an item weighs once converted (bytes, strings, arrays; 8 for anything else)."""
    if isinstance(item, (bytes, bytearray, str, memoryview)):
        return 8 + len(item)
    nbytes = getattr(item, "nbytes", None)
    return 8 + nbytes if isinstance(nbytes, int) else 8


class _EngineStream:
    """What the engine pulls a lazy generator call through (``next``, ``close``): a failure comes
    out as the RuntimeError the engine expects (the original exception stashed, as for batches)."""

    def __init__(
        self,
        name: str,
        pull: Callable[[int, int], tuple[int, pa.Array, bool]],
        close: Callable[[], None],
    ) -> None:
        self.name = name
        self._pull = pull
        self._close = close

    def next(self, max_items: int, max_bytes: int) -> tuple[int, pa.Array, bool]:
        """(first row, one list of items per row from it on, whether every row is finished)."""
        try:
            return self._pull(max_items, max_bytes)
        except CallCancelled:
            message = f"UDF '{self.name}' was stopped: the query was cancelled"
        except BaseException as exc:  # KeyboardInterrupt / SystemExit raised by user code too
            token = _stash(exc)
            message = f"UDF '{self.name}' failed: {type(exc).__name__}: {exc} {_TOKEN}{token}]"
        del self
        raise RuntimeError(message)

    def close(self) -> None:
        self._close()


class _GeneratorStream:
    """A generator UDF's call over a batch of rows, pulled lazily: each ``pull`` takes at most
    ``max_items`` items (and stops once about ``max_bytes`` are taken) from the rows' generators in
    order, so an endless generator under a filter and a limit stops when the limit is reached, and
    what is pulled at once stays bounded. Runs on a call thread of the UDF (thread mode) or in its
    worker process.

    Errors: ``on_error`` applies per row; a row that fails after it yielded items keeps them (they
    may already be downstream), and ``max_retries`` restarts a row's generator only while it has
    yielded nothing."""

    def __init__(self, runner: _GeneratorRunner, rows: list[tuple], max_items: int) -> None:
        self.runner = runner
        self.rows = rows
        self.per_row_cap = max_items  # a limit above: most items any row needs (-1: all)
        self.row = 0  # the row being pulled
        self.items: Any = None  # its iterator (None: not started)
        self.taken = 0  # items taken from it
        self.attempts = 0  # failed starts of it

    def pull(self, max_items: int, max_bytes: int) -> tuple[int, pa.Array, bool]:
        """(first row, one list of items per row from it on, whether every row is finished)."""
        first, lists = self._pull(max_items, max_bytes)
        array = _to_arrow_result(lists, self.runner.dtype, len(lists), self.runner.name)
        return first, array, self.row >= len(self.rows)

    def _pull(self, max_items: int, max_bytes: int) -> tuple[int, list[list[Any]]]:
        """``lists[i]``: the items taken now from row ``first + i`` (the rows up to the current one;
        None for a row whose generator yielded nothing)."""
        first = self.row
        lists: list[list[Any]] = []
        count = size = 0
        while self.row < len(self.rows) and count < max_items and size < max_bytes:
            if len(lists) == self.row - first:
                lists.append([])  # the current row's items in this chunk
            item, finished = self._next_item()
            if finished:
                if self.taken == 0:
                    lists[-1] = None  # the row yielded nothing: one null row (Daft's rule)
                elif not lists[-1]:
                    # Its items all went out in earlier chunks (only the chunk's first row can be
                    # so): it has no entry here, or the explode would add a null row for it.
                    lists.pop()
                    first += 1
                self._finish_row()
                continue
            lists[-1].append(item)
            count += 1
            size += _item_bytes(item)
        return first, lists

    def _next_item(self) -> tuple[Any, bool]:
        """The current row's next item, or (None, True) once it is finished (or failed)."""
        runner = self.runner
        while True:
            try:
                if self.items is None:
                    self.items = iter(runner.func(*self.rows[self.row]))
                    self.taken = 0
                if 0 <= self.per_row_cap <= self.taken:
                    return None, True
                item = next(self.items)
                self.taken += 1
                return item, False
            except StopIteration:
                return None, True
            except Exception as exc:
                if self.taken == 0 and self.attempts < runner.max_retries:
                    self.attempts += 1
                    self._close_items()
                    continue
                runner._row_failed(exc)  # raises with on_error="raise"
                return None, True

    def _finish_row(self) -> None:
        self._close_items()
        self.row += 1
        self.attempts = 0

    def _close_items(self) -> None:
        items, self.items = self.items, None
        close = getattr(items, "close", None)
        if close is not None:
            try:
                close()
            except ValueError:  # still running on an abandoned call thread
                pass

    def close(self) -> None:
        """The engine needs no more items: the current row's generator is closed."""
        self._close_items()
        self.row = len(self.rows)


_ASYNC_MAX_CONCURRENCY = 1024  # default coroutines awaiting at once, over all batches of one UDF


def _run_loop(loop: Any) -> None:
    """An async UDF's event loop thread: runs until its runner is collected."""
    try:
        loop.run_forever()
    finally:
        loop.close()


class _AsyncRowRunner(_RowFunctionRunner):
    """An ``async def`` row function: the rows of every batch in flight run on one event loop (a
    daemon thread of this UDF), at most ``max_concurrency`` awaiting at once across batches;
    ``timeout_s`` bounds each row's coroutine."""

    def __init__(
        self,
        name: str,
        dtype: DataType,
        func: Callable[..., Any],
        max_concurrency: int = _ASYNC_MAX_CONCURRENCY,
        **options: Any,
    ) -> None:
        super().__init__(name, dtype, func, **options)
        self.max_concurrency = max_concurrency

    _RUNTIME_STATE = (*_RowFunctionRunner._RUNTIME_STATE, "_loop", "_gate", "_loop_lock")

    def _init_runtime(self) -> None:
        super()._init_runtime()
        self._loop: Any = None
        self._gate: Any = None
        self._loop_lock = threading.Lock()

    def _event_loop(self) -> Any:
        import asyncio

        with self._loop_lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(
                    target=_run_loop, args=(loop,), name=f"ketch-async-{self.name}", daemon=True
                ).start()
                self._loop = loop
            return self._loop

    def __del__(self) -> None:
        loop = self.__dict__.get("_loop")
        if loop is not None:  # the runner is gone: its loop's thread exits
            try:
                loop.call_soon_threadsafe(loop.stop)
            except RuntimeError:  # already closed
                pass

    async def _one(self, row: tuple) -> Any:
        import asyncio

        if self._gate is None:  # made on the loop's thread, once
            self._gate = asyncio.Semaphore(self.max_concurrency)
        async with self._gate:
            for attempt in range(self.max_retries + 1):
                try:
                    if self.timeout_s is None:
                        return await self.func(*row)
                    try:
                        return await asyncio.wait_for(self.func(*row), self.timeout_s)
                    except TimeoutError:
                        raise CallTimedOut(
                            f"UDF '{self.name}' call ran longer than timeout_s={self.timeout_s:g}"
                        ) from None
                except Exception as exc:
                    if attempt < self.max_retries:
                        await asyncio.sleep(_retry_pause(exc))
                        continue
                    return self._row_failed(exc)
            return None

    def invoke(self, args: list[pa.Array], num_rows: int) -> Any:
        import asyncio

        async def run_all() -> list[Any]:
            return await asyncio.gather(*(self._one(row) for row in self._rows(args)))

        results = asyncio.run_coroutine_threadsafe(run_all(), self._event_loop()).result()
        if self.dtype.extension_name == "ketch.python":
            return results
        return large_arrays.from_values(results, self.dtype.to_arrow())

    def worker_factory(self) -> Any:
        return _function_worker_factory(self, {"max_concurrency": self.max_concurrency})


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
        row_wise: bool = False,
        call_kind: str = "",
        **options: Any,
    ) -> None:
        super().__init__(name, dtype, **options)
        self.cls, self.init_args, self.init_kwargs = cls, init_args, init_kwargs
        self.method = method
        self.concurrency = concurrency
        self.row_wise = row_wise  # one call per row with Python values (Daft 0.7 methods)
        # "async": an ``async def`` method, the rows of a batch awaited together on an event loop
        # of the call; "generator": each row's yielded items as one list (exploded into rows; a
        # row that yields nothing gives a null row, Daft's rule); "": a plain method.
        self.call_kind = call_kind

    _RUNTIME_STATE = (*_Runner._RUNTIME_STATE, "_idle", "_created", "_lock")

    def _init_runtime(self) -> None:
        super()._init_runtime()
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

    def prepare(self) -> None:
        """Makes the first instance now (``__init__``'s exceptions propagate) unless one exists."""
        with self._lock:
            create = self._created == 0
            if create:
                self._created += 1
        if not create:
            return
        try:
            instance = self.cls(*self.init_args, **self.init_kwargs)
        except BaseException:
            with self._lock:
                self._created -= 1
            raise
        self._idle.put(instance)

    def invoke(self, args: list[pa.Array], num_rows: int) -> Any:
        instance = self._acquire()
        restart_call_clock()  # timeout_s bounds the call, not __init__
        try:
            bound = getattr(instance, self.method)
            if self.call_kind == "async":
                import asyncio

                rows = list(zip(*[to_pylist(a) for a in args], strict=True))

                async def run_all() -> list[Any]:
                    return await asyncio.gather(*(bound(*row) for row in rows))

                return asyncio.run(run_all())
            if self.call_kind == "generator":
                return [list(bound(*row)) or None for row in zip(*[to_pylist(a) for a in args], strict=True)]
            if self.row_wise:
                return [bound(*row) for row in zip(*[to_pylist(a) for a in args], strict=True)]
            return bound(*[Series(a) for a in args])
        finally:
            if not current_call_abandoned():
                self._idle.put(instance)  # an abandoned call's instance is dropped when it returns

    def call_abandoned(self) -> None:
        # The instance stays busy with the abandoned call: a new one may be made in its place.
        with self._lock:
            self._created -= 1

    def worker_factory(self) -> Any:
        return functools.partial(
            _instance_call_factory,
            self.name,
            self.dtype,
            self.cls,
            self.init_args,
            self.init_kwargs,
            self.method,
            {
                "max_retries": self.max_retries,
                "on_error": self.on_error,
                "timeout_s": self.timeout_s,
                "row_wise": self.row_wise,
                "call_kind": self.call_kind,
            },
            self.batch_size,
        )


# Rows per call when a UDF sets no batch_size: functions that take Series get large batches (the
# per-call cost is paid once per batch), row-wise ones small (their cost is per row; small batches
# spread over the UDF's workers). The planner cuts both so an input of known size reaches every
# worker.
_DEFAULT_BATCH_ROWS = 128 * 1024  # the engine's default morsel (Daft's too)
_DEFAULT_ROW_WISE_BATCH_ROWS = 512
_ASYNC_WORKER_THREADS = 4  # engine threads with a batch on an async UDF's event loop at once


@dataclasses.dataclass(frozen=True)
class _Options:
    """What a UDF decorator was given, checked once."""

    return_dtype: DataType
    batch_size: int | None = None
    concurrency: int | None = None
    num_cpus: float | None = None
    num_gpus: float = 0.0
    memory_bytes: int | None = None
    max_retries: int = 0
    on_error: str = "raise"
    use_process: bool | None = None
    is_async: bool = False
    timeout_s: float | None = None
    ray_options: dict[str, Any] | None = None
    concurrency_given: bool = False  # the user set concurrency / max_concurrency


def _ray_runner_configured() -> bool:
    """True when the next query runs on the Ray runner (set, or chosen by KETCH_RUNNER)."""
    from ketch import runners

    current = runners._runner
    if current is not None:
        return getattr(current, "name", "") == "ray"
    return os.environ.get("KETCH_RUNNER", "").strip().lower() == "ray"


def _available_gpus() -> int:
    """GPUs this machine offers: CUDA_VISIBLE_DEVICES when set, else what nvidia-smi lists."""
    from ketch.execution.gpu_slices import visible_gpus

    return len(visible_gpus())


def _check_options(name: str, options: _Options) -> _Options:
    """Validates the options and fills the concurrency from the resource request (plan time)."""
    _check_positive("batch_size", options.batch_size)
    _check_positive("concurrency", options.concurrency)
    if options.max_retries < 0 or not isinstance(options.max_retries, int):
        raise ValueError(f"max_retries must be an int >= 0, got {options.max_retries!r}")
    if options.on_error not in ("raise", "log", "ignore"):
        raise ValueError(f"on_error must be 'raise', 'log' or 'ignore', got {options.on_error!r}")
    if options.timeout_s is not None and (
        isinstance(options.timeout_s, bool)
        or not isinstance(options.timeout_s, int | float)
        or options.timeout_s <= 0
    ):
        raise ValueError(f"timeout_s must be a number of seconds > 0, got {options.timeout_s!r}")
    for field, value in (("cpus", options.num_cpus), ("gpus", options.num_gpus)):
        if value is not None and (not isinstance(value, int | float) or value < 0):
            raise ValueError(f"{field} must be a number >= 0, got {value!r}")
    if options.ray_options is not None and not isinstance(options.ray_options, dict):
        raise ValueError(f"ray_options must be a dict of Ray actor options, got {options.ray_options!r}")
    concurrency = options.concurrency
    options = dataclasses.replace(options, concurrency_given=concurrency is not None)
    if _ray_runner_configured():
        # The Ray runner checks the request against the cluster's nodes when a query starts, and
        # sizes a GPU pool without concurrency from the cluster's GPUs (ketch.runners.ray.actor_pool).
        return options
    cpus = os.cpu_count() or 1
    if options.num_gpus:
        gpus = _available_gpus()
        if concurrency is None:
            concurrency = max(1, int(gpus // options.num_gpus)) if gpus else 1
        wanted = options.num_gpus * concurrency
        if wanted > gpus:
            raise ValueError(
                f"UDF '{name}' asks for {options.num_gpus} GPU(s) x {concurrency} instance(s) = "
                f"{wanted} GPUs, but this machine has {gpus}"
            )
    if options.num_cpus and options.num_cpus > cpus:
        raise ValueError(
            f"UDF '{name}' asks for {options.num_cpus} CPUs per instance; this machine has {cpus}"
        )
    if concurrency is None and options.num_cpus:
        concurrency = max(1, int(cpus // options.num_cpus))
    # Otherwise (None): one worker thread (they share the GIL), or in process mode one worker
    # process per CPU, decided in _udf_expression once the mode is known.
    return dataclasses.replace(options, concurrency=concurrency)


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


def _check_positive(name: str, value: int | None) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def _arrow_representable(dtype: DataType) -> bool:
    return dtype.extension_name != "ketch.python"


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
        from ketch.udf_methods import method_spec

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
    from ketch.udf_methods import annotated_dtype, method_spec

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


func.batch = functools.partial(func, batch=True)  # type: ignore[attr-defined]


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


# ``ketch.udf.metrics`` (Daft's ``daft.udf.metrics``): ``ketch.udf`` is the ``udf`` decorator
# (Daft's legacy API) once ``ketch`` is imported, and this module otherwise; both carry it, and
# ``from ketch.udf.metrics import increment_counter`` finds it in sys.modules.
metrics = udf_metrics
udf.metrics = udf_metrics  # type: ignore[attr-defined]
sys.modules.setdefault(__name__ + ".metrics", udf_metrics)
