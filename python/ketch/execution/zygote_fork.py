"""The UDF worker zygote forked from the engine process itself, when that is safe.

A zygote started as a fresh interpreter (``python -m ketch.execution.udf_worker --zygote``) spends
about half a second importing pyarrow, numpy and Ketch before it can fork a worker; a process-mode
UDF declared just before its query waits for that. The engine process has all of it imported
already, so forking the zygote from it makes it ready in milliseconds. ``engine_can_fork()`` allows
that only when a fork is as safe as a fresh interpreter:

- Linux, and no thread besides the main one: no Python thread (``threading.active_count() == 1``)
  and no native thread started since ``import ketch`` (``/proc/self/task`` holds as many threads as
  it did then: numpy's BLAS pool and jemalloc's background thread, both with at-fork handlers, are
  there from the imports; an engine thread pool started by a query, or a library such as torch
  starting its own, is not). A fork copies only the forking thread, so a lock held by another
  thread would stay locked in the copy for ever;
- the engine's resident memory is at most ``_MAX_RSS_BYTES`` (256 MiB): the forked zygote shares
  the engine's pages copy-on-write, and a page the engine frees or rewrites later stays resident
  in the zygote until it exits, so the most a fork can pin is bounded;
- ``KETCH_UDF_ZYGOTE`` is not ``exec`` (that setting always starts a fresh interpreter), and no
  forked zygote of this process died before it got ready (``stop_forking``).

In the forked copy (``fork_zygote``), before it serves: stdin/stdout/stderr become its own pipes
(as for the fresh interpreter, with new ``sys.std*`` objects over them: the engine's may be closed
or replaced by the user), every other file descriptor it inherited is pointed at
``/dev/null`` (so the engine's sockets and files are not held open by the zygote or its workers,
and a finalizer closing one of those numbers later cannot close a descriptor of the zygote's own),
signal handlers the engine installed go back to their defaults, and the inherited objects are
frozen out of the garbage collector (``gc.freeze()``: a worker's collections then do not write to,
and so copy, the pages it shares). The zygote and its workers leave with ``os._exit``: no atexit
handler or finalizer of the engine runs in them. Modules imported by the engine before the fork
are the zygote's as they were then (a fresh interpreter would import them from disk again), except
modules still being imported at the fork (a UDF declared at the top of its own module): those are
dropped from ``sys.modules``, so a worker imports them whole from their files. A UDF declared inside
a zygote or worker (a worker importing the UDF's module) prestarts nothing (``in_udf_worker``).

Everything else (the fork protocol, worker hygiene) is ``ketch.execution.udf_worker``'s.
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from typing import IO, Any

_MAX_RSS_BYTES = 256 << 20
_WAIT_POLL_S = 0.005


def _os_threads() -> int | None:
    """Threads of this process as the kernel counts them (None where /proc is not there)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


def _rss_bytes() -> int | None:
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


# Recorded at `import ketch` (ketch/__init__.py imports this module last).
THREADS_AT_IMPORT = _os_threads()


def engine_can_fork() -> bool:
    """True when forking the zygote from this process is as safe as starting a fresh interpreter
    (the conditions are in the module docstring). Never raises."""
    if _FORK_FAILED or os.environ.get("KETCH_UDF_ZYGOTE", "").strip().lower() == "exec":
        return False
    if not sys.platform.startswith("linux") or threading.active_count() != 1:
        return False
    threads, rss = _os_threads(), _rss_bytes()
    if threads is None or THREADS_AT_IMPORT is None or threads > THREADS_AT_IMPORT:
        return False
    return rss is not None and rss <= _MAX_RSS_BYTES


def stop_forking() -> None:
    """A forked zygote died before it got ready: fresh interpreters from now on in this process."""
    global _FORK_FAILED
    _FORK_FAILED = True


_FORK_FAILED = False


class ForkedProcess:
    """The parts of ``subprocess.Popen`` the engine uses, for a child made by ``os.fork``:
    ``pid``, ``stdin`` (write end, never written: closing it tells the zygote to stop), ``stdout``
    and ``stderr`` (read ends), ``poll``, ``wait`` (raises ``subprocess.TimeoutExpired``) and
    ``kill``. ``returncode`` is negative for a signal, as Popen's."""

    def __init__(self, pid: int, stdin: int, stdout: int, stderr: int) -> None:
        self.pid = pid
        self.args = ["<forked UDF worker zygote>"]
        self.stdin: IO[bytes] = os.fdopen(stdin, "wb", buffering=0)
        self.stdout: IO[bytes] = os.fdopen(stdout, "rb", buffering=0)
        self.stderr: IO[bytes] = os.fdopen(stderr, "rb", buffering=0)
        self.returncode: int | None = None
        self._lock = threading.Lock()

    def poll(self) -> int | None:
        with self._lock:
            if self.returncode is None:
                try:
                    pid, status = os.waitpid(self.pid, os.WNOHANG)
                except ChildProcessError:  # reaped elsewhere (SIGCHLD ignored): gone, code unknown
                    self.returncode = 0
                else:
                    if pid:
                        self.returncode = os.waitstatus_to_exitcode(status)
            return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            time.sleep(_WAIT_POLL_S)
        return code

    def __del__(self) -> None:
        try:  # a zygote that exited on its own is reaped here if nobody waited for it
            self.poll()
        except Exception:  # noqa: BLE001 - interpreter teardown
            pass

    def abandon(self) -> None:
        """Kills the process, reaps it and closes the pipes (a start that did not complete)."""
        _kill_and_reap(self.pid)
        self.returncode = -signal.SIGKILL
        for pipe in (self.stdin, self.stdout, self.stderr):
            pipe.close()

    def kill(self) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def fork_zygote(control_fd: int) -> ForkedProcess:
    """Forks this process into a UDF worker zygote serving the engine over ``control_fd`` (one end
    of a Unix socket pair; the caller closes it afterwards). Raises ``OSError`` when the fork or
    its pipes fail (the caller then starts a fresh interpreter).

    A Ctrl-C (SIGINT) while it works is held back until the zygote is complete, then delivered as
    usual (KeyboardInterrupt); one that surfaces before that ends the copy and closes its pipes
    first, so nothing outlives the interrupt. Blocking SIGINT in this thread is not enough for that:
    the kernel hands it to another thread (BLAS, jemalloc) then, and Python raises it here at any
    point; so a Python handler defers it meanwhile. The block keeps the copy from taking one before
    it ignores SIGINT, as a zygote does."""
    # Else the copy would print the engine's buffered text (sys.__stdout__ too: a user may have
    # replaced sys.stdout).
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed or odd stream: nothing to flush
            pass
    deferred: list[tuple[int, Any]] = []
    previous = signal.getsignal(signal.SIGINT)
    defer = previous is not None and threading.current_thread() is threading.main_thread()
    if defer:
        signal.signal(signal.SIGINT, lambda signum, frame: deferred.append((signum, frame)))
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    fds: list[int] = []
    pid: int | None = None
    proc: ForkedProcess | None = None
    try:
        for _ in range(3):
            fds.extend(os.pipe())
        stdin_r, stdin_w, stdout_r, stdout_w, stderr_r, stderr_w = fds
        with warnings.catch_warnings():  # Python 3.12+ warns of any native thread (BLAS, jemalloc)
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            _run_forked_zygote(control_fd, stdin_r, stdout_w, stderr_w, blocked)  # never returns
        for fd in (stdin_r, stdout_w, stderr_w):
            os.close(fd)
            fds.remove(fd)
        proc = ForkedProcess(pid, stdin_w, stdout_r, stderr_r)
        fds = []
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        if defer:
            defer = False
            signal.signal(signal.SIGINT, previous)
            if deferred:
                _deliver(previous, *deferred[0])
    except BaseException:
        if proc is not None:
            proc.abandon()
        elif pid:
            _kill_and_reap(pid)
        for fd in fds:
            os.close(fd)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        if defer:
            signal.signal(signal.SIGINT, previous)
        raise
    return proc


def _deliver(handler: Any, signum: int, frame: Any) -> None:
    """A deferred signal, as ``handler`` (the one now installed again) would have taken it."""
    if callable(handler):
        handler(signum, frame)
    elif handler == signal.SIG_DFL:
        os.kill(os.getpid(), signum)


def _kill_and_reap(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _run_forked_zygote(
    control_fd: int, stdin_r: int, stdout_w: int, stderr_w: int, sigmask: set[signal.Signals]
) -> None:
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the engine decides when the zygote stops
        signal.pthread_sigmask(signal.SIG_SETMASK, sigmask)
        os.dup2(stdin_r, 0)
        os.dup2(stdout_w, 1)
        os.dup2(stderr_w, 2)
        _point_inherited_fds_at_devnull(keep={0, 1, 2, control_fd})
        _fresh_std_streams()
        signal.set_wakeup_fd(-1)
        for signum in signal.valid_signals():
            if signum != signal.SIGINT and callable(signal.getsignal(signum)):
                try:
                    signal.signal(signum, signal.SIG_DFL)
                except (OSError, ValueError):
                    pass
        _forget_modules_being_imported()
        gc.freeze()
        from ketch.execution.udf_worker import zygote

        code = zygote(control_fd)
    except BaseException:  # noqa: BLE001 - reported on the zygote's stderr (drained by the engine)
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _forget_modules_being_imported() -> None:
    """A UDF is often declared while its module is being imported (``@ketch.cls`` at the top level
    of ``udfs.py``): the fork copies that module half-run, without what its file defines below the
    declaration. Such modules (and packages whose ``__init__`` is still running) leave
    ``sys.modules`` here, so a worker unpickling ``udfs.Model`` imports ``udfs`` whole from its file,
    as a worker of a fresh-interpreter zygote does."""
    for name, module in list(sys.modules.items()):
        if getattr(getattr(module, "__spec__", None), "_initializing", False):
            del sys.modules[name]


def in_udf_worker() -> bool:
    """True in a zygote or UDF worker process (set by ``mark_udf_worker``): a process-mode UDF
    declared there (a worker importing the module that declares it) starts no zygote of its own."""
    return _IN_UDF_WORKER


def mark_udf_worker() -> None:
    global _IN_UDF_WORKER
    _IN_UDF_WORKER = True


_IN_UDF_WORKER = False


def _point_inherited_fds_at_devnull(keep: set[int]) -> None:
    """Every open descriptor but ``keep`` now refers to /dev/null (not closed: its number stays
    taken, so an inherited object that closes it later closes only that)."""
    fds = [int(name) for name in os.listdir("/proc/self/fd")]  # includes the listing's own, closed now
    devnull = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
    try:
        for fd in fds:
            if fd in keep or fd == devnull:
                continue
            try:
                os.fstat(fd)
            except OSError:
                continue  # not open (the listing's own descriptor)
            try:
                os.dup2(devnull, fd, inheritable=False)
            except OSError:
                pass
    finally:
        os.close(devnull)


_INHERITED_STREAMS: list[object] = []


def _fresh_std_streams() -> None:
    """sys.stdin/stdout/stderr (and their ``__std*__``) become new text streams over descriptors
    0, 1 and 2, as in a fresh interpreter: the engine's may be closed, or replaced by the user (an
    ``io.StringIO`` would swallow what a worker prints). The inherited objects are kept referenced
    (never finalized here: a finalizer flushing one would print the engine's buffered text twice)."""
    _INHERITED_STREAMS.extend(
        (sys.stdin, sys.stdout, sys.stderr, sys.__stdin__, sys.__stdout__, sys.__stderr__)
    )
    sys.stdin = sys.__stdin__ = open(0, closefd=False)  # lives as long as the process
    sys.stdout = sys.__stdout__ = open(1, "w", closefd=False)
    sys.stderr = sys.__stderr__ = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")
