"""Worker processes for process-mode UDFs (``use_process=True``, and class UDFs by default).

Start-up. Workers are forked from a zygote (``ketch.execution.udf_worker --zygote``): one Python
process per engine with Ketch, pyarrow, cloudpickle and numpy already imported and no user code,
started in the background as soon as a process-mode UDF is declared or planned. A fork from it
costs milliseconds where a fresh interpreter with those imports costs about a second. The zygote
itself is forked from the engine when that is safe (ketch.execution.zygote_fork: no thread started
since ``import ketch``, a small engine; it then holds the engine's modules as they were, but none
of its descriptors), else started as a fresh interpreter (about 0.5 s). The first
batch a pool receives starts all ``concurrency`` workers at once, in parallel; each loads the UDF
and runs its ``__init__`` right away (not on its first batch), and a batch goes to whichever
worker is ready first.

Lifetime. A pool belongs to one UDF expression (``model(col("x"))``): it keeps its workers (and
their instances: ``__init__`` once) across the queries that use that expression, until the pool is
garbage collected (the expression and every plan holding it are gone: a collected DataFrame drops
its plan) or the interpreter exits; then each worker gets a shutdown message and is killed if it
does not exit within 5 s. Pools are not shared between expressions, even of the same bound class
(two stages of one model keep ``concurrency`` instances each, as in Daft). A cancelled call
(Ctrl-C, or another operator failed) kills its worker, the pool's idle workers and those still
starting (workers busy with another query's calls are left to them); the next query starts them
afresh. The zygote stops once no pool has a worker or is about to start one (a pool planned but
not run yet, not one whose query was cancelled), and at exit.

Each worker serves one batch at a time over an authenticated Unix domain socket, batches in
shared memory (ketch.execution.ipc). Output of the zygote and its workers (one pair of pipes) is
drained into the engine's own stdout and stderr, so a chatty UDF never blocks on a full pipe. A
worker that dies (a segfault, os._exit) fails its batch with the signal or exit code, its shared
memory segments are unlinked, and the next batch starts a fresh worker; one found dead before it
read its batch (killed while idle) is replaced and the batch goes to another worker. Workers and
the zygote exit when the engine process dies (their stdin is a pipe only the engine writes to).
A child the engine makes with ``os.fork()`` (or multiprocessing's "fork") drops its copies of the
parent's zygote and workers and starts its own when it runs a process-mode UDF.

A forked worker takes the engine's sys.path, environment and working directory of the moment it
starts, and reseeds numpy's global generator; libraries the zygote imported (numpy, pyarrow,
pandas) were initialised with the environment of the zygote's start (thread-count variables such
as OMP_NUM_THREADS set later do not reach them)."""

from __future__ import annotations

import atexit
import collections
import logging
import os
import pickle
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable
from multiprocessing.connection import Connection, Listener
from typing import Any

import pyarrow as pa

from ketch.execution import zygote_fork
from ketch.execution.call_threads import POLL_S, CallCancelled, CallTimedOut, wait_for
from ketch.execution.ipc import Inbox, Outbox, deserialize, reclaim_segments
from ketch.udf import metrics as udf_metrics

_START_TIMEOUT_S = 120.0
_SHUTDOWN_TIMEOUT_S = 5.0
_CANCEL_WAIT_S = 2.0  # a cancel waits this long at most for the worker starts it discarded
_log = logging.getLogger("ketch.udf")


class WorkerDied(RuntimeError):
    """The worker process ended while it held a batch (or before it was ready)."""


class _WorkerGone(WorkerDied):
    """The worker was already dead when it was sent a batch: the batch never ran there."""


def _drain(fd_in: Any, fd_out: int) -> None:
    """Copies a child's pipe into this process's stdout/stderr until it closes, then closes our
    end (at once, not when the garbage collector gets to it: two descriptors per zygote)."""
    try:
        while True:
            chunk = os.read(fd_in.fileno(), 65536)
            if not chunk:
                break
            try:
                os.write(fd_out, chunk)
            except OSError:
                pass  # our own stream is closed: keep draining so the worker never blocks
    except (OSError, ValueError):  # ValueError: the stream was closed meanwhile
        pass
    finally:
        try:
            fd_in.close()
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


class _Zygote:
    """The engine's handle on the zygote process: fork requests, kills and exit codes of its
    workers (their parent is the zygote, which reports each exit)."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.proc: subprocess.Popen | zygote_fork.ForkedProcess | None = None
        try:
            try:
                self.proc = self._start(theirs.fileno())
            finally:
                theirs.close()
            self._conn = Connection(ours.detach())
            for stream, fd in ((self.proc.stdout, 1), (self.proc.stderr, 2)):
                threading.Thread(
                    target=_drain, args=(stream, fd), name="ketch-zygote-drain", daemon=True
                ).start()
        except BaseException:  # a Ctrl-C meanwhile: the zygote must not outlive it
            ours.close()
            if hasattr(self, "_conn"):
                self._conn.close()
            if self.proc is not None:
                self.proc.kill()
                self.proc.wait()
                for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                    pipe.close()  # type: ignore[union-attr]
            raise
        self._send_lock = threading.RLock()  # RLock: a pool's __del__ may run inside a send
        self._cond = threading.Condition(threading.RLock())
        self._ready = False
        self.dead = False
        self._forks: collections.deque[list[int]] = collections.deque()  # replies come in order
        self._children: set[int] = set()
        self._exits: dict[int, int] = {}
        self._reader = threading.Thread(target=self._read, name="ketch-zygote", daemon=True)
        self._reader.start()

    @staticmethod
    def _start(control_fd: int) -> subprocess.Popen | zygote_fork.ForkedProcess:
        """Forks the zygote from this process when that is safe (ready in milliseconds: see
        ketch.execution.zygote_fork), else starts it as a fresh interpreter."""
        if zygote_fork.engine_can_fork():
            try:
                return zygote_fork.fork_zygote(control_fd)
            except OSError as exc:
                _log.debug("could not fork the UDF worker zygote (%s): starting an interpreter", exc)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # Ketch imports there too
        return subprocess.Popen(
            [sys.executable, "-m", "ketch.execution.udf_worker", "--zygote", str(control_fd)],
            stdin=subprocess.PIPE,  # never written: its end of file tells the engine is gone
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            pass_fds=(control_fd,),
        )

    def _read(self) -> None:
        try:
            while True:
                message = self._conn.recv()
                with self._cond:
                    if message[0] == "ready":
                        self._ready = True
                    elif message[0] == "forked":
                        self._children.add(message[1])
                        self._forks.popleft().append(message[1])
                    elif message[0] == "exit":
                        self._children.discard(message[1])
                        self._exits[message[1]] = message[2]
                    self._cond.notify_all()
        except (EOFError, OSError):
            pass
        with self._cond:
            self.dead = True
            if not self._ready and isinstance(self.proc, zygote_fork.ForkedProcess):
                # A forked zygote that died before it was ready: this process is not one to fork
                # from (the copy reported why on stderr); later zygotes are fresh interpreters.
                zygote_fork.stop_forking()
            self._cond.notify_all()
        try:  # reaped now, not when the next query notices: no zombie stays behind a killed zygote
            self.proc.wait(timeout=_SHUTDOWN_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - still running (stop() kills it) or reaped elsewhere
            pass

    def died_forked_before_ready(self) -> bool:
        """Whether this was a zygote forked from the engine that died before it got ready."""
        with self._cond:
            return self.dead and not self._ready and isinstance(self.proc, zygote_fork.ForkedProcess)

    def _wait(self, ready: Callable[[], bool], cancelled: Callable[[], bool] | None, deadline: float) -> None:
        with self._cond:
            while not ready():
                if self.dead:
                    code = self.proc.poll()
                    raise WorkerDied(f"the UDF worker zygote process {_describe_exit(code)}")
                if cancelled is not None and cancelled():
                    raise CallCancelled()
                if time.monotonic() > deadline:
                    raise WorkerDied(f"the UDF worker zygote did not answer within {_START_TIMEOUT_S:g} s")
                self._cond.wait(POLL_S)

    def fork(self, request: tuple, cancelled: Callable[[], bool] | None) -> int:
        """A new worker (``request``: the udf_worker "fork" message); returns its pid."""
        deadline = time.monotonic() + _START_TIMEOUT_S
        self._wait(lambda: self._ready, cancelled, deadline)
        slot: list[int] = []
        with self._send_lock:
            with self._cond:
                self._forks.append(slot)
            try:
                self._conn.send(request)
            except OSError as exc:
                raise WorkerDied(f"the UDF worker zygote process {_describe_exit(self.proc.poll())}") from exc
        self._wait(lambda: bool(slot), None, deadline)  # a fork answers at once: no cancel needed
        return slot[0]

    def exit_code(self, pid: int) -> int | None:
        with self._cond:
            return self._exits.get(pid)

    def wait(self, pid: int, timeout: float) -> int | None:
        """The worker's exit code once the zygote reaped it (None: still running after ``timeout``
        seconds, or unknown because the zygote is gone)."""
        if threading.current_thread() is self._reader:
            return self.exit_code(pid)  # the reader delivers exits: it cannot wait for one
        deadline = time.monotonic() + timeout
        with self._cond:
            while pid not in self._exits and not self.dead:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(min(left, POLL_S))
            return self._exits.get(pid)

    def kill(self, pid: int) -> None:
        if self.owner != os.getpid():
            return  # a copy in a child made by os.fork(): the worker is the parent's
        with self._cond:
            if pid in self._exits:
                return
            dead = self.dead
        if dead:
            # Orphaned (the zygote was killed): no one reaps it but init, so its pid is ours
            # until it exits.
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            return
        with self._send_lock:
            try:
                self._conn.send(("kill", pid))
            except OSError:
                pass

    def forget(self, pid: int) -> None:
        with self._cond:
            self._exits.pop(pid, None)

    def drop_copies(self) -> None:
        """In a child made by os.fork(): closes the child's copies of the zygote's pipes and socket,
        saying nothing to it (the zygote is the parent's; it sees the end of its stdin, and stops,
        once the parent is gone, however long the child lives)."""
        for end in (self.proc.stdin, self.proc.stdout, self.proc.stderr, self._conn):
            try:
                end.close()
            except Exception:  # noqa: BLE001
                pass

    def stop(self) -> None:
        """Closes the zygote's stdin: it kills any worker it still has and exits. One still
        importing (no worker yet: forks are only asked of a ready zygote) is killed at once."""
        with self._send_lock:
            try:
                self._conn.send(("stop",))  # (an end of file alone means the engine died)
            except OSError:
                pass
        try:
            self.proc.stdin.close()
        except Exception:  # noqa: BLE001
            pass
        with self._cond:
            ready = self._ready
        if not ready:
            self.proc.kill()
        try:
            self.proc.wait(timeout=_SHUTDOWN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._conn.close()


_zygote: _Zygote | None = None
_zygote_lock = threading.RLock()


def _get_zygote() -> _Zygote:
    global _zygote
    with _zygote_lock:
        if _zygote is None or _zygote.dead or _zygote.owner != os.getpid():
            _zygote = _Zygote()  # (a forked copy of the engine starts its own)
        return _zygote


def prestart() -> None:
    """Starts the zygote in the background (it holds no user code) so that the first worker of a
    process-mode UDF forks from an interpreter that has its imports done. Never raises. Not in a
    UDF worker: there a declaration comes from importing the UDF's module, and a query that does
    need workers starts the zygote then."""
    if zygote_fork.in_udf_worker():
        return
    try:
        _get_zygote()
    except Exception as exc:  # noqa: BLE001 - the first worker start reports it
        _log.debug("could not prestart the UDF worker zygote: %s", exc)


def _stop_zygote_if_unused() -> None:
    """Stops the zygote when no pool has a worker (started or starting) or may start one soon (a
    pool planned but not run yet; not one whose query was cancelled: it starts the zygote again
    if it runs again)."""
    global _zygote
    with _zygote_lock:  # held while it stops: a caller returns once the zygote is gone
        pools = list(_POOLS)
        if _zygote is None or any(p.wants_zygote or p.num_workers(starting=True) for p in pools):
            return
        zygote, _zygote = _zygote, None
        zygote.stop()


class WorkerProcess:
    """One worker process forked from the zygote, connected and sent its UDF; ``wait_ready``
    waits until it has run ``__init__``."""

    def __init__(
        self,
        payload: bytes,
        udf_name: str,
        cancelled: Callable[[], bool] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.udf_name = udf_name
        self.gpu_slot: int | None = None  # its slice of the GPUs (ketch.execution.gpu_slices)
        self.pid: int | None = None
        self.started_at: float | None = None  # time.monotonic() when the worker process started
        self.ready_at: float | None = None  # ... and when it had its UDF built
        authkey = secrets.token_bytes(32)
        # A Unix domain socket (a path in a private temp dir): a round trip costs tens of
        # microseconds, where loopback TCP with Nagle's algorithm costs about a millisecond.
        listener = Listener(family="AF_UNIX", authkey=authkey)
        # The worker names its shared-memory segments with this prefix: when it dies or is killed
        # mid-batch, the engine unlinks what it left (reclaim_segments).
        self.segment_prefix = f"ketch-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            request = ("fork", listener.address, authkey, self.segment_prefix, list(sys.path))
            request += ({**os.environ, **(env or {})}, os.getcwd())
            self.zygote = _get_zygote()
            try:
                self.pid = self.zygote.fork(request, cancelled)
            except WorkerDied:
                if not self.zygote.died_forked_before_ready():
                    raise
                self.zygote = _get_zygote()  # once more, from a fresh interpreter (stop_forking)
                self.pid = self.zygote.fork(request, cancelled)
            self.conn = self._accept(listener, cancelled)
        except BaseException:
            listener.close()
            self.kill()
            raise
        listener.close()
        self.conn.send(("init", payload))
        self.outbox, self.inbox = Outbox(f"{self.segment_prefix}-e"), Inbox()

    def _accept(self, listener: Listener, cancelled: Callable[[], bool] | None) -> Connection:
        accepted: list[Any] = []

        def accept() -> None:
            try:
                accepted.append(listener.accept())
            except Exception as exc:  # noqa: BLE001
                accepted.append(exc)

        acceptor = threading.Thread(target=accept, name="ketch-worker-accept", daemon=True)
        acceptor.start()
        pid: int = self.pid  # type: ignore[assignment]

        def connected_or_gone(step: float) -> bool:  # a worker may die before it connects
            acceptor.join(step)
            return not acceptor.is_alive() or self.zygote.exit_code(pid) is not None

        try:
            wait_for(connected_or_gone, cancelled, time.monotonic() + _START_TIMEOUT_S)
        except CallTimedOut:
            pass
        if not accepted or isinstance(accepted[0], Exception):
            raise WorkerDied(
                f"the worker process for UDF '{self.udf_name}' did not start "
                f"({_describe_exit(self.zygote.exit_code(pid))})"
            )
        return accepted[0]

    def wait_ready(self, cancelled: Callable[[], bool] | None = None) -> None:
        """Waits for the worker's "ready" (UDF loaded, ``__init__`` run or failed: a failure is
        raised by the next batch)."""
        reply = self._receive(cancelled)
        _, _, self.started_at, _ = reply
        self.ready_at = time.monotonic()

    def _receive(self, cancelled: Callable[[], bool] | None) -> Any:
        """The worker's next message. Raises _WorkerGone when it died before reading ours,
        WorkerDied when it died otherwise, CallCancelled when ``cancelled()`` turns true."""
        try:
            wait_for(self.conn.poll, cancelled, None)
            return self.conn.recv()
        except ConnectionResetError as exc:
            # A Unix socket reports a reset only when the peer closed with our message unread:
            # the worker died (its last thread exiting) before it read the batch.
            raise _WorkerGone(str(self._died())) from exc
        except (EOFError, OSError) as exc:
            raise self._died() from exc

    def _died(self) -> WorkerDied:
        code = self.zygote.wait(self.pid, _SHUTDOWN_TIMEOUT_S)  # type: ignore[arg-type]
        return WorkerDied(f"the worker process for UDF '{self.udf_name}' {_describe_exit(code)}")

    def call(
        self,
        args: list[pa.Array],
        num_rows: int,
        cancelled: Callable[[], bool] | None = None,
        max_items: int = -1,
    ) -> pa.Array:
        """One batch through the worker. Raises CallCancelled when ``cancelled()`` turns true
        while it works, WorkerDied when it dies, or the UDF's error."""
        name, size = self.outbox.put_arrays(args)
        try:
            self.conn.send(("batch", name, size, num_rows, max_items))
        except OSError as exc:  # EPIPE: the worker's end is closed, it never got the batch
            raise _WorkerGone(str(self._died())) from exc
        reply = self._receive(cancelled)
        if reply[0] == "ok":
            udf_metrics.merge(reply[3] if len(reply) > 3 else None)  # the batch's custom counters
            return deserialize(self.inbox.take(reply[1], reply[2]))[0]
        raise self._error(reply)

    def start_stream(
        self, args: list[pa.Array], num_rows: int, cancelled: Callable[[], bool] | None, max_items: int
    ) -> None:
        """Starts a generator call over the batch in the worker (pulled with ``stream_next``)."""
        name, size = self.outbox.put_arrays(args)
        try:
            self.conn.send(("stream", name, size, num_rows, max_items))
        except OSError as exc:
            raise _WorkerGone(str(self._died())) from exc
        reply = self._receive(cancelled)
        if reply[0] != "streaming":
            raise self._error(reply)

    def stream_next(
        self, max_items: int, max_bytes: int, cancelled: Callable[[], bool] | None
    ) -> tuple[int, pa.Array, bool]:
        """The next chunk of the worker's generator call: (first row, lists, done). After an error
        the worker has ended the call."""
        try:
            self.conn.send(("next", max_items, max_bytes))
        except OSError as exc:
            raise self._died() from exc
        reply = self._receive(cancelled)
        if reply[0] == "chunk":
            _, first, done, name, size = reply
            return first, deserialize(self.inbox.take(name, size))[0], done
        raise self._error(reply)

    def stream_close(self) -> None:
        """Ends the worker's generator call (its generators are closed)."""
        try:
            self.conn.send(("close",))
        except OSError as exc:
            raise self._died() from exc
        self._receive(None)

    def _error(self, reply: tuple) -> BaseException:
        """The UDF's exception from an "error" reply, noted with the worker's traceback."""
        _, type_name, message, trace, pickled = reply
        error: BaseException | None = None
        if pickled is not None:
            try:
                error = pickle.loads(pickled)
            except Exception:  # noqa: BLE001
                error = None
        if error is None:
            error = RuntimeError(f"{type_name}: {message}")
        error.add_note(f"Raised in the UDF worker process (pid {self.pid}):\n{trace}")
        return error

    def alive(self) -> bool:
        return self.pid is not None and self.zygote.exit_code(self.pid) is None and not self.zygote.dead

    def shutdown(self) -> None:
        try:
            self.conn.send(("shutdown",))
            self.conn.close()
        except Exception:  # noqa: BLE001
            pass
        if self.pid is not None and self.zygote.wait(self.pid, _SHUTDOWN_TIMEOUT_S) is None:
            self.kill()
        self._release()

    def drop_copies(self) -> None:
        """In a child made by os.fork(): closes the child's copy of the connection, saying nothing
        (the worker and its shared-memory segments are the parent's)."""
        if hasattr(self, "conn"):
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001
                pass

    def kill(self) -> None:
        if self.pid is not None:
            self.zygote.kill(self.pid)
            self.zygote.wait(self.pid, _SHUTDOWN_TIMEOUT_S)
        self._release()

    def _release(self) -> None:
        if hasattr(self, "conn"):
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001
                pass
        for box in ("outbox", "inbox"):
            if hasattr(self, box):
                getattr(self, box).close()
        reclaim_segments(self.segment_prefix)
        if self.pid is not None:
            self.zygote.forget(self.pid)


class ProcessPool:
    """``concurrency`` worker processes for one UDF: the first batch starts them all, in parallel;
    each batch goes to an idle worker (the first ready one while they start)."""

    def __init__(self, payload: bytes, udf_name: str, concurrency: int, gpus: float = 0.0) -> None:
        self.payload = payload
        self.udf_name = udf_name
        self.concurrency = concurrency
        # GPUs per worker: worker k starts with CUDA_VISIBLE_DEVICES set to its own slice of the
        # visible GPUs (gpu_slices.devices_for); slots are reused as workers die and restart.
        self.gpus = gpus
        self._pending_slots: set[int] = set()
        self._cond = threading.Condition(threading.RLock())  # RLock: GC may run __del__ inside
        self._workers: list[WorkerProcess] = []  # ready (idle or busy)
        self._idle: list[WorkerProcess] = []
        self._starting = 0
        self._discarded = 0  # starts of older generations still running (they kill their worker)
        self._generation = 0  # bumped by cancels and shutdown: older starts are discarded
        self._start_errors: list[BaseException] = []
        self.wants_zygote = True  # until cancelled or shut down; again from its next start
        _POOLS.add(self)
        prestart()

    # -- starting ---------------------------------------------------------------------------------
    def start(self) -> None:
        """Starts the missing workers (up to ``concurrency``), each on a thread of its own. The
        threads hold the pool weakly: a pool released while its workers start is still freed."""
        with self._cond:
            self.wants_zygote = True
            missing = self.concurrency - len(self._workers) - self._starting
            self._starting += max(0, missing)
            generation = self._generation
            slots = [self._take_gpu_slot() for _ in range(max(0, missing))] if self.gpus else []
        for k in range(missing):
            slot = slots[k] if slots else None
            threading.Thread(
                target=_start_worker,
                args=(weakref.ref(self), generation, self.payload, self.udf_name, slot, self.gpus),
                name=f"ketch-start-{self.udf_name}",
                daemon=True,
            ).start()

    def _take_gpu_slot(self) -> int:
        """The lowest GPU slot no worker (ready or starting) holds; called with the lock held."""
        held = {w.gpu_slot for w in self._workers} | self._pending_slots
        slot = next(i for i in range(len(held) + 1) if i not in held)
        self._pending_slots.add(slot)
        return slot

    def _started(
        self,
        generation: int,
        worker: WorkerProcess | None,
        error: BaseException | None,
        gpu_slot: int | None = None,
    ) -> bool:
        """A start finished: True when the worker joins the pool (else the caller kills it)."""
        with self._cond:
            if gpu_slot is not None and generation == self._generation:
                self._pending_slots.discard(gpu_slot)  # a joining worker holds it from now on
            if generation != self._generation:
                return False  # cancelled or shut down meanwhile (counted in _discarded then)
            self._starting -= 1
            if error is None:
                self._workers.append(worker)  # type: ignore[arg-type]
                self._idle.append(worker)  # type: ignore[arg-type]
            elif not isinstance(error, CallCancelled):
                self._start_errors.append(error)
            self._cond.notify_all()
            return error is None

    def _acquire(self, cancelled: Callable[[], bool] | None) -> WorkerProcess:
        """An idle worker; starts the missing ones first. Waits (polling ``cancelled``) while all
        are busy or starting; raises a start failure when no worker is left to wait for."""
        with self._cond:
            while True:
                if self._idle:
                    return self._idle.pop()
                if self._start_errors and not self._starting and not self._workers:
                    error = self._start_errors[0]
                    self._start_errors.clear()  # the next batch tries again
                    raise error
                if cancelled is not None and cancelled():
                    raise CallCancelled()  # (before starting any: the query is over)
                if not self._start_errors and len(self._workers) + self._starting < self.concurrency:
                    self.start()
                    continue
                self._cond.wait(POLL_S)

    def _release(self, worker: WorkerProcess) -> None:
        with self._cond:
            if worker in self._workers:
                self._idle.append(worker)
                self._cond.notify_all()

    def _drop(self, worker: WorkerProcess) -> None:
        with self._cond:
            if worker in self._workers:
                self._workers.remove(worker)
            if worker in self._idle:
                self._idle.remove(worker)
        worker.kill()

    # -- calls ------------------------------------------------------------------------------------
    def call(
        self,
        args: list[pa.Array],
        num_rows: int,
        cancelled: Callable[[], bool] | None = None,
        max_items: int = -1,
    ) -> pa.Array:
        while True:
            worker = self._acquire_alive(cancelled)
            try:
                result = worker.call(args, num_rows, cancelled, max_items)
            except CallCancelled:
                self._cancel(worker)
                raise
            except _WorkerGone:
                self._drop(worker)  # died while idle, not yet reported: the batch goes elsewhere
                continue
            except WorkerDied:
                self._drop(worker)
                raise
            except BaseException:
                self._release(worker)
                raise
            self._release(worker)
            return result

    def _acquire_alive(self, cancelled: Callable[[], bool] | None) -> Any:
        """An idle, live worker (one that died while idle, e.g. to the OOM killer, is dropped and
        another taken). CallCancelled when the query stops while waiting."""
        while True:
            try:
                worker = self._acquire(cancelled)
            except CallCancelled:
                self._cancel(None)
                raise
            if worker.alive():
                return worker
            self._drop(worker)

    def start_stream(
        self, args: list[pa.Array], num_rows: int, cancelled: Callable[[], bool] | None, max_items: int
    ) -> _WorkerStream:
        """A generator call pulled lazily from one worker, which serves nothing else until the
        stream is done or closed."""
        while True:
            worker = self._acquire_alive(cancelled)
            try:
                worker.start_stream(args, num_rows, cancelled, max_items)
            except CallCancelled:
                self._cancel(worker)
                raise
            except _WorkerGone:
                self._drop(worker)
                continue
            except WorkerDied:
                self._drop(worker)
                raise
            except BaseException:
                self._release(worker)
                raise
            return _WorkerStream(self, worker)

    def num_workers(self, starting: bool = False) -> int:
        """Workers ready (and, with ``starting``, those still starting)."""
        with self._cond:
            return len(self._workers) + (self._starting if starting else 0)

    def _cancel(self, worker: WorkerProcess | None) -> None:
        """A call was cancelled (Ctrl-C, or the query failed): kills its worker, the idle ones and
        those still starting; workers busy with other calls (another query sharing the UDF) stay
        (the cancelled query's own calls each kill theirs)."""
        with self._cond:
            self._generation += 1  # starts in flight are discarded
            self._pending_slots.clear()
            self._discarded += self._starting
            self._starting = 0
            self._start_errors = []
            victims, self._idle = self._idle, []
            if worker is not None:
                victims.append(worker)
            self._workers = [w for w in self._workers if w not in victims]
            if not self._workers:
                self.wants_zygote = False  # until it runs again
            self._cond.notify_all()
        for victim in victims:
            victim.kill()
        # Starts in flight notice the new generation within a poll interval and kill their worker:
        # wait for them (bounded), so no process of the cancelled query outlives the cancel.
        deadline = time.monotonic() + _CANCEL_WAIT_S
        with self._cond:
            while self._discarded and time.monotonic() < deadline:
                self._cond.wait(POLL_S)
        _stop_zygote_if_unused()

    def _discarded_start_done(self) -> None:
        with self._cond:
            self._discarded = max(0, self._discarded - 1)
            self._cond.notify_all()

    def shutdown(self) -> None:
        with self._cond:
            self._generation += 1
            self.wants_zygote = False
            self._pending_slots.clear()
            workers, self._workers, self._idle = self._workers, [], []
            self._discarded += self._starting
            self._starting = 0
        for worker in workers:
            worker.shutdown()
        _stop_zygote_if_unused()

    def __del__(self) -> None:
        try:
            self.shutdown()
        except Exception:  # noqa: BLE001
            pass

    def _forget_workers(self) -> None:
        """In a child made by os.fork() (see _forget_after_fork): the workers are the parent's; the
        pool starts its own when it runs. Its lock is new: another thread may have held it."""
        self._cond = threading.Condition(threading.RLock())
        workers = self._workers
        self._workers, self._idle, self._start_errors = [], [], []
        self._starting = self._discarded = 0
        self._generation += 1
        self._pending_slots = set()
        for worker in workers:
            worker.drop_copies()


class _WorkerStream:
    """A generator call in one worker: ``next`` pulls a chunk; the worker goes back to its pool
    when the call is done, fails or is closed (killed when cancelled, dropped when it died)."""

    def __init__(self, pool: ProcessPool, worker: WorkerProcess) -> None:
        self.pool = pool
        self.worker: WorkerProcess | None = worker

    def next(
        self, max_items: int, max_bytes: int, cancelled: Callable[[], bool] | None
    ) -> tuple[int, pa.Array, bool]:
        worker = self.worker
        if worker is None:
            raise RuntimeError("the generator call is over")
        try:
            first, lists, done = worker.stream_next(max_items, max_bytes, cancelled)
        except CallCancelled:
            self.worker = None
            self.pool._cancel(worker)
            raise
        except WorkerDied:
            self.worker = None
            self.pool._drop(worker)
            raise
        except BaseException:
            self.worker = None  # the UDF's own error: the worker ended the call
            self.pool._release(worker)
            raise
        if done:
            self.close()
        return first, lists, done

    def close(self) -> None:
        worker, self.worker = self.worker, None
        if worker is None:
            return
        try:
            worker.stream_close()
        except BaseException:  # noqa: BLE001 - it died meanwhile
            self.pool._drop(worker)
            return
        self.pool._release(worker)


def _start_worker(
    pool_ref: weakref.ref[ProcessPool],
    generation: int,
    payload: bytes,
    udf_name: str,
    gpu_slot: int | None = None,
    gpus: float = 0.0,
) -> None:
    """A starter thread: one worker for the pool, unless the pool is released or its generation
    ends (a cancelled query) meanwhile. ``gpu_slot``: the worker's slice of the visible GPUs."""

    def stale() -> bool:
        pool = pool_ref()
        return pool is None or pool._generation != generation

    worker: WorkerProcess | None = None
    error: BaseException | None = None
    try:
        env = None
        if gpu_slot is not None:
            from ketch.execution.gpu_slices import devices_for, visible_gpus

            env = {"CUDA_VISIBLE_DEVICES": ",".join(devices_for(gpu_slot, gpus, visible_gpus()))}
        worker = WorkerProcess(payload, udf_name, stale, env)
        worker.gpu_slot = gpu_slot
        worker.wait_ready(stale)
    except BaseException as exc:  # noqa: BLE001 - handed to a waiting batch
        error = exc
    pool = pool_ref()
    if pool is not None and pool._started(generation, worker, error, gpu_slot):
        return
    if worker is not None:
        worker.kill()
    if pool is not None and stale():
        pool._discarded_start_done()
    del pool
    _stop_zygote_if_unused()


_POOLS: weakref.WeakSet[ProcessPool] = weakref.WeakSet()


def _forget_after_fork() -> None:
    """In a child made by os.fork() (the user's own, multiprocessing's "fork" start method): the
    zygote and the workers belong to the parent. Without this the child would send its batches to
    the parent's workers (their replies mixing with the parent's), stop them at its exit, and keep
    the parent's zygote and workers alive after the parent died for as long as the child lives (its
    copy of the zygote's stdin). The child closes its copies, says nothing to them, and starts its
    own zygote when it runs a process-mode UDF. Locks are new: another thread may have held one."""
    global _zygote, _zygote_lock
    _zygote_lock = threading.RLock()
    zygote, _zygote = _zygote, None
    if zygote is not None:
        zygote.drop_copies()
    for pool in list(_POOLS):
        pool._forget_workers()


os.register_at_fork(after_in_child=_forget_after_fork)


@atexit.register
def _shutdown_all() -> None:
    for pool in list(_POOLS):
        pool.shutdown()
    global _zygote
    with _zygote_lock:
        zygote, _zygote = _zygote, None
    if zygote is not None:
        zygote.stop()
