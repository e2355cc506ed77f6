"""``async def`` UDFs: one event loop per UDF on a thread of its own; the rows of a batch run as
coroutines, at most ``max_concurrency`` awaiting at once over all batches; retries and
``on_error`` per row."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from ketch import large_arrays
from ketch.datatype import DataType
from ketch.execution.call_threads import (
    CallTimedOut,
)
from ketch.udf.errors import _retry_pause
from ketch.udf.runners import _function_worker_factory, _RowFunctionRunner

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
