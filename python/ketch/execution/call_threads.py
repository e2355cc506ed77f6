"""Runs user code on daemon threads of its own so the engine's thread can wait for it with a deadline
and a cancel check: Ctrl-C, a failed query or ``timeout_s`` end the wait at once (polled every
``POLL_S``), and the call is abandoned — its thread finishes the user function in the background
and then exits, and is never reused. Python cannot stop a thread blocked in ``time.sleep`` or a
socket read; abandoning it (a daemon, so interpreter exit does not wait for it) is the only way
to return within a poll interval. Worker processes are killed instead (``process_pool``)."""

from __future__ import annotations

import contextvars
import functools
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

POLL_S = 0.05  # how often a waiting engine thread checks for cancellation
_current = threading.local()  # the job a call thread is running


def current_call_abandoned() -> bool:
    """True on a call thread whose call was given up (timed out or cancelled): state the call
    holds (a class UDF instance) must not be reused."""
    job = getattr(_current, "job", None)
    return job is not None and job.abandoned


class CallCancelled(Exception):
    """The query was cancelled (Ctrl-C or another operator failed) while a UDF call ran."""


class CallTimedOut(TimeoutError):
    """A UDF call ran longer than the UDF's ``timeout_s``."""


def restart_call_clock() -> None:
    """On a call thread: ``timeout_s`` counts from now (a class UDF's ``__init__`` before the call
    does not count)."""
    job = getattr(_current, "job", None)
    if job is not None:
        job.started = time.monotonic()


def wait_for(
    done: Callable[[float], bool],
    cancelled: Callable[[], bool] | None,
    deadline: float | Callable[[], float] | None,
) -> None:
    """Waits until ``done(timeout_s)`` returns True, polling ``cancelled`` every POLL_S seconds.

    Raises CallCancelled when ``cancelled()`` turns true, CallTimedOut past ``deadline``
    (``time.monotonic()`` seconds, or a callable returning them)."""
    while True:
        step = POLL_S
        if deadline is not None:
            left = (deadline() if callable(deadline) else deadline) - time.monotonic()
            if left <= 0:
                raise CallTimedOut()
            step = min(step, left)
        if done(step):
            return
        if cancelled is not None and cancelled():
            raise CallCancelled()


class _Job:
    __slots__ = ("fn", "event", "result", "error", "abandoned", "started")

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn
        self.event = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self.abandoned = False
        self.started = time.monotonic()


class CallThreads:
    """A growing set of idle daemon threads for one UDF (as many as calls run at once)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._idle: queue.SimpleQueue[queue.SimpleQueue[_Job | None]] = queue.SimpleQueue()

    def run(
        self, fn: Callable[[], Any], cancelled: Callable[[], bool] | None, timeout_s: float | None
    ) -> Any:
        """``fn()`` on a call thread; its result, or its exception re-raised here.

        Raises CallCancelled / CallTimedOut (see :func:`wait_for`) and abandons the call then."""
        try:
            inbox = self._idle.get_nowait()
        except queue.Empty:
            inbox = queue.SimpleQueue()
            threading.Thread(
                target=self._serve, args=(inbox,), name=f"ketch-udf-{self.name}", daemon=True
            ).start()
        job = _Job(functools.partial(contextvars.copy_context().run, fn))  # the caller's context goes along
        inbox.put(job)
        try:
            wait_for(
                job.event.wait, cancelled, None if timeout_s is None else lambda: job.started + timeout_s
            )
        except BaseException:
            job.abandoned = True  # the thread exits once fn returns; its inbox is dropped
            inbox.put(None)  # (in case it already looked at `abandoned`)
            raise
        self._idle.put(inbox)
        if job.error is not None:
            error, job.error = job.error, None
            raise error
        return job.result

    @staticmethod
    def _serve(inbox: queue.SimpleQueue[_Job | None]) -> None:
        while True:
            job = inbox.get()
            if job is None:
                return
            _current.job = job
            try:
                job.result = job.fn()
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                job.error = exc
            job.fn = None  # type: ignore[assignment]
            _current.job = None
            job.event.set()
            if job.abandoned:
                return
            # Parked until the next call: the job (its result, a UDF's output of maybe gigabytes)
            # belongs to the waiting thread alone.
            del job
