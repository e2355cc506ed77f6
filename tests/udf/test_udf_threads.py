"""Thread-mode UDFs leave no thread behind: the call threads of a UDF exit when its expression (and
every plan holding it) is released, or after ``CallThreads.IDLE_EXIT_S`` seconds parked; an async
UDF's event-loop thread exits with its UDF. Waits are bounded polls of the thread list, never
sleeps that assume a duration."""

from __future__ import annotations

import gc
import threading
import time

import pytest

import ketch
from ketch import col
from ketch.execution.call_threads import CallThreads

DEADLINE_S = 30.0


def _udf_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(("ketch-udf-", "ketch-async-"))]


def _wait_for_threads(expected: int) -> list[str]:
    deadline = time.monotonic() + DEADLINE_S
    while len(_udf_threads()) != expected and time.monotonic() < deadline:
        time.sleep(0.01)
    return _udf_threads()


class Slow:
    """Each call waits until ``expected`` calls run at once (so the query uses that many threads)."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.lock = threading.Lock()
        self.arrived = 0

    def __call__(self, x):
        with self.lock:
            self.arrived += 1
        deadline = time.monotonic() + DEADLINE_S
        while self.arrived < self.expected and time.monotonic() < deadline:
            time.sleep(0.005)
        return [v * 2 for v in x.to_pylist()]


@pytest.fixture(autouse=True)
def _no_udf_threads_before():
    gc.collect()
    assert _wait_for_threads(0) == []  # earlier tests' UDFs are gone


def test_call_threads_exit_when_the_udf_is_released():
    udf = ketch.cls(return_dtype=int, batch_size=1, concurrency=3, use_process=False)(Slow)
    expr = udf(3)(col("x"))
    out = ketch.from_pydict({"x": [1, 2, 3]}).with_column("y", expr).to_pydict()
    assert out["y"] == [2, 4, 6]
    parked = _udf_threads()
    assert len(parked) == 3 and all(name == "ketch-udf-Slow" for name in parked)  # warm for the next query
    del expr, udf
    gc.collect()
    assert _wait_for_threads(0) == []


def test_parked_call_threads_exit_after_the_idle_timeout_and_come_back(monkeypatch):
    monkeypatch.setattr(CallThreads, "IDLE_EXIT_S", 0.05)

    @ketch.func(return_dtype=int)
    def plus_one(x: int) -> int:
        return x + 1

    expr = plus_one(col("x"))
    assert ketch.from_pydict({"x": [1, 2]}).with_column("y", expr).to_pydict()["y"] == [2, 3]
    assert _wait_for_threads(0) == []  # the expression is alive, its threads are not
    assert ketch.from_pydict({"x": [5]}).with_column("y", expr).to_pydict()["y"] == [6]


def test_async_udf_loop_thread_exits_with_the_udf():
    @ketch.func(return_dtype=int)
    async def plus_one(x: int) -> int:
        return x + 1

    expr = plus_one(col("x"))
    assert ketch.from_pydict({"x": [1, 2]}).with_column("y", expr).to_pydict()["y"] == [2, 3]
    assert "ketch-async-plus_one" in _udf_threads()
    del expr, plus_one
    gc.collect()
    assert _wait_for_threads(0) == []
