"""What the native executor calls for a UDF batch: ``_Runner`` (retries, ``on_error``,
``timeout_s``, cancellation, worker processes and Ray actor pools, pickling for the Ray runner)
and the function runners (``_BatchFunctionRunner``: Series in, array out; ``_RowFunctionRunner``:
one Python call per row). ``_sliced``: a worker process's call, ``batch_size`` rows at a time."""

from __future__ import annotations

import contextvars
import functools
import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from ketch import large_arrays
from ketch.datatype import DataType
from ketch.execution.call_threads import (
    CallCancelled,
    CallThreads,
    CallTimedOut,
)
from ketch.series import Series, to_pylist
from ketch.udf import metrics as udf_metrics
from ketch.udf.errors import _TOKEN, _log, _retry_pause, _stash
from ketch.udf.results import _nulls, _to_arrow_result

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
