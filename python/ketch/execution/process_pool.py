"""Worker processes for ``use_process=True`` UDFs: started lazily (up to the UDF's concurrency),
each serving one batch at a time over an authenticated Unix domain socket, batches in shared memory
(ketch.execution.ipc). Their stdout and stderr are drained into the engine's own (so a chatty UDF
never blocks on a full pipe); at teardown they get a shutdown message and are killed if they do not
exit within 5 s. A worker that dies (a segfault, os._exit) fails its batch with the signal or exit
code; the next batch starts a fresh worker."""

from __future__ import annotations

import atexit
import os
import pickle
import queue
import secrets
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable
from multiprocessing.connection import Listener
from typing import Any

import pyarrow as pa

from ketch.execution.call_threads import POLL_S, CallCancelled, CallTimedOut, wait_for
from ketch.execution.ipc import Inbox, Outbox, deserialize, reclaim_segments

_START_TIMEOUT_S = 120.0
_SHUTDOWN_TIMEOUT_S = 5.0


class WorkerDied(RuntimeError):
    """The worker process ended while it held a batch."""


def _drain(fd_in: Any, fd_out: int) -> None:
    """Copies a worker's pipe into this process's stdout/stderr until it closes."""
    try:
        while True:
            chunk = os.read(fd_in.fileno(), 65536)
            if not chunk:
                break
            try:
                os.write(fd_out, chunk)
            except OSError:
                pass  # our own stream is closed: keep draining so the worker never blocks
    except OSError:
        pass


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "is no longer answering"
    if code < 0:
        try:
            return f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


class WorkerProcess:
    def __init__(self, payload: bytes, udf_name: str, cancelled: Callable[[], bool] | None = None) -> None:
        self.udf_name = udf_name
        authkey = secrets.token_bytes(32)
        # A Unix domain socket (a path in a private temp dir): a round trip costs tens of
        # microseconds, where loopback TCP with Nagle's algorithm costs about a millisecond.
        listener = Listener(family="AF_UNIX", authkey=authkey)
        address = listener.address
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # the UDF's modules import there too
        # The worker names its shared-memory segments with this prefix: when it dies or is killed
        # mid-batch, the engine unlinks what it left (reclaim_segments).
        self.segment_prefix = f"ketch-{os.getpid()}-{secrets.token_hex(4)}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ketch.execution.udf_worker", address, self.segment_prefix],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.proc.stdin.write(authkey.hex().encode() + b"\n")
        self.proc.stdin.flush()  # stdin stays open: the worker exits when it reads end of file
        for stream, fd in ((self.proc.stdout, 1), (self.proc.stderr, 2)):
            threading.Thread(target=_drain, args=(stream, fd), daemon=True).start()
        accepted: list[Any] = []

        def accept() -> None:
            try:
                accepted.append(listener.accept())
            except Exception as exc:  # noqa: BLE001
                accepted.append(exc)

        acceptor = threading.Thread(target=accept, daemon=True)
        acceptor.start()
        try:
            wait_for(
                lambda step: (acceptor.join(step), not acceptor.is_alive())[1],
                cancelled,
                time.monotonic() + _START_TIMEOUT_S,
            )
        except (CallCancelled, CallTimedOut) as exc:
            listener.close()
            self.kill()
            if isinstance(exc, CallCancelled):
                raise
        listener.close()
        if not accepted or isinstance(accepted[0], Exception):
            self.kill()
            raise WorkerDied(
                f"the worker process for UDF '{udf_name}' did not start ({_describe_exit(self.proc.poll())})"
            )
        self.conn = accepted[0]
        self.conn.send(("init", payload))
        self.outbox, self.inbox = Outbox(f"{self.segment_prefix}-e"), Inbox()

    def call(
        self,
        args: list[pa.Array],
        num_rows: int,
        cancelled: Callable[[], bool] | None = None,
        max_items: int = -1,
    ) -> pa.Array:
        """One batch through the worker. Raises CallCancelled (after killing the worker) when
        ``cancelled()`` turns true while it works, WorkerDied when it dies, or the UDF's error."""
        name, size = self.outbox.put_arrays(args)
        try:
            self.conn.send(("batch", name, size, num_rows, max_items))
            try:
                wait_for(self.conn.poll, cancelled, None)
            except CallCancelled:
                self.kill()
                raise
            reply = self.conn.recv()
        except (EOFError, OSError) as exc:
            try:
                code = self.proc.wait(timeout=_SHUTDOWN_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                code = None
            raise WorkerDied(f"the worker process for UDF '{self.udf_name}' {_describe_exit(code)}") from exc
        if reply[0] == "ok":
            return deserialize(self.inbox.take(reply[1], reply[2]))[0]
        _, type_name, message, trace, pickled = reply
        error: BaseException | None = None
        if pickled is not None:
            try:
                error = pickle.loads(pickled)
            except Exception:  # noqa: BLE001
                error = None
        if error is None:
            error = RuntimeError(f"{type_name}: {message}")
        error.add_note(f"Raised in the UDF worker process (pid {self.proc.pid}):\n{trace}")
        raise error

    def alive(self) -> bool:
        return self.proc.poll() is None

    def shutdown(self) -> None:
        try:
            self.conn.send(("shutdown",))
            self.conn.close()
        except Exception:  # noqa: BLE001
            pass
        try:
            self.proc.wait(timeout=_SHUTDOWN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
        self._release()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._release()

    def _release(self) -> None:
        try:
            self.proc.stdin.close()
        except Exception:  # noqa: BLE001
            pass
        for box in ("outbox", "inbox"):
            if hasattr(self, box):
                getattr(self, box).close()
        reclaim_segments(self.segment_prefix)


class ProcessPool:
    """At most ``concurrency`` worker processes for one UDF, created by the first batches that
    find none idle."""

    def __init__(self, payload: bytes, udf_name: str, concurrency: int) -> None:
        self.payload = payload
        self.udf_name = udf_name
        self.concurrency = concurrency
        self._idle: queue.SimpleQueue[WorkerProcess] = queue.SimpleQueue()
        self._workers: list[WorkerProcess] = []
        self._lock = threading.Lock()
        _POOLS.add(self)

    def _acquire(self, cancelled: Callable[[], bool] | None = None) -> WorkerProcess:
        """An idle worker, or a new one while fewer than ``concurrency`` exist; waits (polling
        ``cancelled``) while all are busy."""
        while True:
            try:
                return self._idle.get_nowait()
            except queue.Empty:
                pass
            with self._lock:
                create = len(self._workers) < self.concurrency
                if create:
                    self._workers.append(None)  # type: ignore[arg-type]  # reserve the slot
            if create:
                break
            try:
                return self._idle.get(timeout=POLL_S)
            except queue.Empty:
                pass
            if cancelled is not None and cancelled():
                raise CallCancelled()
        try:
            worker = WorkerProcess(self.payload, self.udf_name, cancelled)
        except BaseException:
            with self._lock:
                self._workers.remove(None)  # type: ignore[arg-type]
            raise
        with self._lock:
            self._workers[self._workers.index(None)] = worker  # type: ignore[arg-type]
        return worker

    def call(
        self,
        args: list[pa.Array],
        num_rows: int,
        cancelled: Callable[[], bool] | None = None,
        max_items: int = -1,
    ) -> pa.Array:
        worker = self._acquire(cancelled)
        try:
            result = worker.call(args, num_rows, cancelled, max_items)
        except (WorkerDied, CallCancelled):
            with self._lock:
                self._workers.remove(worker)
            worker.kill()
            raise
        except BaseException:
            self._idle.put(worker)
            raise
        self._idle.put(worker)
        return result

    def num_workers(self) -> int:
        with self._lock:
            return sum(1 for w in self._workers if w is not None)

    def shutdown(self) -> None:
        with self._lock:
            workers = [w for w in self._workers if w is not None]
            self._workers = []
        for worker in workers:
            worker.shutdown()

    def __del__(self) -> None:
        try:
            self.shutdown()
        except Exception:  # noqa: BLE001
            pass


_POOLS: weakref.WeakSet[ProcessPool] = weakref.WeakSet()


@atexit.register
def _shutdown_all() -> None:
    for pool in list(_POOLS):
        pool.shutdown()
