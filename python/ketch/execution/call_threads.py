"""Runs user code on daemon threads of its own so the engine's thread can wait for it with a deadline
and a cancel check: Ctrl-C, a failed query or ``timeout_s`` end the wait at once (polled every
``POLL_S``), and the call is abandoned — its thread finishes the user function in the background
and then exits, and is never reused. Python cannot stop a thread blocked in ``time.sleep`` or a
socket read; abandoning it (a daemon, so interpreter exit does not wait for it) is the only way
to return within a poll interval. Worker processes are killed instead (``process_pool``). Idle
call threads exit after ``CallThreads.IDLE_EXIT_S`` seconds, or when their UDF is released."""

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


class _Idle:
    """The parked call threads of one CallThreads (their inboxes), shared with the threads (which
    hold no reference to the CallThreads itself, so it can be collected while they park)."""

    __slots__ = ("lock", "inboxes", "closed")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.inboxes: list[queue.SimpleQueue[_Job | None]] = []
        self.closed = False


class CallThreads:
    """A set of daemon threads for one UDF, grown to as many as its calls run at once. A thread
    parked for ``IDLE_EXIT_S`` seconds exits, and all parked threads exit when the CallThreads is
    collected (its UDF expression and every plan holding it are gone) or ``close()``d, so a
    finished query leaves no thread of its UDFs behind for long."""

    IDLE_EXIT_S = 10.0

    def __init__(self, name: str) -> None:
        self.name = name
        self._idle = _Idle()

    def run(
        self, fn: Callable[[], Any], cancelled: Callable[[], bool] | None, timeout_s: float | None
    ) -> Any:
        """``fn()`` on a call thread; its result, or its exception re-raised here.

        Raises CallCancelled / CallTimedOut (see :func:`wait_for`) and abandons the call then."""
        idle = self._idle
        with idle.lock:
            inbox = idle.inboxes.pop() if idle.inboxes else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            threading.Thread(
                target=_serve,
                args=(inbox, idle, self.IDLE_EXIT_S),
                name=f"ketch-udf-{self.name}",
                daemon=True,
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
        with idle.lock:
            if idle.closed:
                inbox.put(None)
            else:
                idle.inboxes.append(inbox)
        if job.error is not None:
            error, job.error = job.error, None
            raise error
        return job.result

    def close(self) -> None:
        """Parked threads exit now; threads still running a call exit when it returns."""
        idle = self._idle
        with idle.lock:
            idle.closed = True
            inboxes, idle.inboxes = idle.inboxes, []
        for inbox in inboxes:
            inbox.put(None)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass


def _serve(inbox: queue.SimpleQueue[_Job | None], idle: _Idle, idle_exit_s: float) -> None:
    while True:
        try:
            job = inbox.get(timeout=idle_exit_s)
        except queue.Empty:
            with idle.lock:
                if inbox in idle.inboxes:  # still parked: nobody is about to hand it a job
                    idle.inboxes.remove(inbox)
                    return
            continue  # taken by run() just now: its job is on the way
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
