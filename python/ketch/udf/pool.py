"""Class UDFs: ``_InstancePoolRunner`` keeps up to ``concurrency`` instances (``__init__`` once
each, lazily on the UDF's threads) and calls the chosen method on batches or rows;
``_instance_call_factory`` builds one instance in a worker process."""

from __future__ import annotations

import functools
import queue
import threading
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from ketch.datatype import DataType
from ketch.execution.call_threads import (
    current_call_abandoned,
    restart_call_clock,
)
from ketch.series import Series, to_pylist
from ketch.udf.runners import _Runner, _sliced


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
