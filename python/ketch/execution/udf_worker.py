"""UDF worker processes, forked from a zygote: ``python -m ketch.execution.udf_worker --zygote FD``.

The zygote is a Python process with Ketch, pyarrow, cloudpickle and numpy already imported (and
pandas, when installed, once the zygote has been idle for a moment) and no user code. A worker
forked from it starts in milliseconds instead of paying an interpreter start and those imports
(about a second) each. The zygote talks
to the engine over the Unix socket FD (inherited; multiprocessing.connection framing, private to
the two processes):

- ("fork", address, authkey, segment_prefix, sys_path, environ, cwd) → ("forked", pid): a worker
  that takes the engine's current sys.path, environment and working directory, then serves the
  engine (below);
- ("stop",): sent before the engine closes the zygote's stdin to stop it (an end of file without
  it means the engine died: the zygote then unlinks the segments the engine left);
- ("kill", pid): SIGKILL to that worker if it has not been reaped yet (so the pid is never reused
  under the engine's feet);
- ("exit", pid, code) is sent by the zygote whenever it reaps a worker (code < 0: the signal, as
  ``subprocess.Popen.returncode``).

Its stdin is a pipe whose write end only the engine holds; the workers inherit it. End of file
there means the engine died (or stopped the zygote): the zygote kills its workers and exits, and
each worker exits on its own too, even in the middle of a UDF call.

A worker connects back to the engine (multiprocessing.connection, HMAC-authenticated with the
32-byte key the zygote was given, never on a command line) and serves requests one at a time; its
shared-memory segments are named ``SEGMENT_PREFIX-<n>`` so the engine can unlink them if the
worker is killed:
- ("init", payload): cloudpickled factory; the UDF is built from it (a class UDF's ``__init__``)
  at once, then the worker replies ("ready", pid, monotonic start time, init error text or None).
  A failed ``__init__`` is raised (with its type and traceback) by the next batch, which retries it.
- ("batch", segment, size, num_rows, max_items): arguments as Arrow IPC in the engine's
  shared-memory segment; replies ("ok", segment, size) with the result in this worker's own
  segment, or ("error", type name, message, traceback text, pickled exception or None).
- ("shutdown",): unlinks its segment and exits.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import sys
import time
import traceback
from multiprocessing.connection import Client, Connection
from typing import Any

_PRELOAD = ("cloudpickle", "numpy", "pyarrow", "pyarrow.compute", "ketch", "ketch.pytype", "ketch.udf")
# The zygote reports ready once _PRELOAD is imported; pandas (about 0.3 s more) waits until it has
# had no fork request for this long: the workers a query asks for right away fork without waiting
# (a request that comes during the import waits for it, as it would have before the zygote was ready;
# short, so that a request coming later finds it done). Workers forked before it import pandas on a
# thread of their own as they start (pyarrow needs it for most conversions of Python lists); from
# the fifth fork request on, the zygote imports it first, so a burst of workers shares one import.
_DEFERRED_IDLE_S = 0.25
# In a worker: whether it had to run the deferred imports itself (forked before the zygote did).
imported_deferred_itself = False
_REPARENT_WAIT_S = 1.0  # a dead engine's child is reparented within moments of its fds closing


def _exit_with_parent() -> None:
    """The engine keeps the write end of fd 0 open for as long as its process lives: end of file
    means the engine died, so the worker exits at once (even in the middle of a UDF call) and no
    orphan stays behind. (PR_SET_PDEATHSIG would fire when the engine *thread* that started the
    worker exits, killing healthy workers of a live engine.)"""
    import threading

    def watch() -> None:
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        os._exit(0)

    threading.Thread(target=watch, name="ketch-parent-watch", daemon=True).start()


def _error_reply(exc: BaseException) -> tuple:
    try:
        pickled = pickle.dumps(exc)
    except Exception:  # noqa: BLE001
        pickled = None
    return ("error", type(exc).__name__, str(exc), traceback.format_exc(), pickled)


def serve(address: str, authkey: bytes, segment_prefix: str) -> int:
    """A worker's life: connect to the engine and serve its requests until shutdown or EOF."""
    started = time.monotonic()
    _exit_with_parent()
    conn = Client(address, family="AF_UNIX", authkey=authkey)

    import cloudpickle
    import pyarrow as pa

    import ketch  # noqa: F401  (registers Ketch's Arrow extension types: images, files, ...)
    import ketch.pytype  # noqa: F401  (Python-object columns arrive as objects, not pickles)
    from ketch.execution.ipc import HANDOFF_BYTES, Inbox, Outbox, deserialize
    from ketch.udf.runners import _MAX_ITEMS

    inbox, outbox = Inbox(), Outbox(segment_prefix)
    stream: Any = None  # a generator call pulled lazily ("stream", "next", "close")
    factory: Any = None
    load_error: BaseException | None = None
    init_error: BaseException | None = None
    call: Any = None
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                return 0  # the engine went away
            kind = message[0]
            if kind == "shutdown":
                return 0
            if kind == "init":
                factory, load_error, init_error, call = None, None, None, None
                try:
                    factory = cloudpickle.loads(message[1])
                    call = factory()  # __init__ of a class UDF runs here, before any batch arrives
                except BaseException as exc:  # noqa: BLE001 - reported with the next batch
                    if factory is None:
                        load_error = exc
                    else:
                        init_error = exc
                failed = load_error or init_error
                conn.send(("ready", os.getpid(), started, None if failed is None else repr(failed)))
                continue
            if kind in ("stream", "next", "close"):
                stream = _serve_stream(conn, message, stream, (inbox, outbox), (factory, load_error, call))
                continue
            if kind != "batch":
                continue
            _, name, size, num_rows, max_items = message
            try:
                args = deserialize(inbox.take(name, size))
                if factory is None:
                    raise RuntimeError(
                        "the UDF could not be loaded in its worker process: "
                        f"{type(load_error).__name__}: {load_error}"
                    ) from load_error
                if call is None:
                    if init_error is not None:
                        error, init_error = init_error, None
                        raise error  # the user's own exception from __init__ (retried next batch)
                    call = factory()
                _MAX_ITEMS.set(max_items)  # generators: items per row a limit above still needs
                result = call(args, num_rows)
                del args
                if result.nbytes >= HANDOFF_BYTES:
                    # Blobs the UDF built and dropped on the way (pyarrow's chunks of a result over
                    # 2 GiB, say) go back to the system before the result is copied to the segment.
                    pa.default_memory_pool().release_unused()
                out_name, out_size = outbox.put_arrays([result])
                del result  # a handed-off result lives on in the engine's mapping only
                from ketch.udf import metrics as udf_metrics  # the batch's custom counters go back with it

                conn.send(("ok", out_name, out_size, udf_metrics.take()))
            except BaseException as exc:  # noqa: BLE001 - reported to the engine
                conn.send(_error_reply(exc))
    finally:
        outbox.close()
        inbox.close()
        conn.close()


def _serve_stream(conn: Connection, message: tuple, stream: Any, boxes: tuple, udf: tuple) -> Any:
    """A generator call pulled lazily: ("stream", segment, size, num_rows, max_items) starts it
    (reply ("streaming",)), ("next", max_items, max_bytes) replies ("chunk", first row, done,
    segment, size) with one list array, ("close",) ends it (reply ("closed",)). An error replies
    ("error", ...) and ends the call. Returns the call in progress (None: none)."""
    from ketch.execution.ipc import deserialize

    (inbox, outbox), (factory, load_error, call) = boxes, udf
    kind = message[0]
    if kind == "close":
        if stream is not None:
            stream.close()
        conn.send(("closed",))
        return None
    try:
        if kind == "stream":
            if stream is not None:
                stream.close()
                stream = None
            _, name, size, num_rows, max_items = message
            args = deserialize(inbox.take(name, size))
            if factory is None:
                raise RuntimeError(
                    "the UDF could not be loaded in its worker process: "
                    f"{type(load_error).__name__}: {load_error}"
                ) from load_error
            runner = getattr(call, "runner", None)
            if runner is None:
                raise RuntimeError(
                    "this UDF cannot stream its items (not a generator, or its __init__ failed)"
                )
            from ketch.udf.generators import _GeneratorStream

            stream = _GeneratorStream(runner, runner._rows(args), max_items)
            conn.send(("streaming",))
            return stream
        if stream is None:
            raise RuntimeError("no generator call in progress")
        first, lists, done = stream.pull(message[1], message[2])
        out_name, out_size = outbox.put_arrays([lists])
        conn.send(("chunk", first, done, out_name, out_size))
        return stream
    except BaseException as exc:  # noqa: BLE001 - reported to the engine; the call is over
        if stream is not None:
            stream.close()
        conn.send(_error_reply(exc))
        return None


def set_process_name(name: str) -> None:
    """The name ``ps``, ``top`` and /proc/PID/comm show for this process (15 bytes at most), so a
    zygote forked from the engine (whose command line is the engine's) and its workers are told
    apart from the engine. Best effort: nothing happens where /proc is not writable."""
    try:
        with open("/proc/self/comm", "w") as comm:
            comm.write(name[:15])
    except OSError:
        pass


def _preload() -> None:
    import importlib

    for module in _PRELOAD:
        importlib.import_module(module)


def _preload_deferred() -> None:
    """What a worker may need but not to start: imported once the zygote is idle (no fork request
    for ``_DEFERRED_IDLE_S``), so the first workers of a query are not held back by it. A worker
    forked earlier imports it on a thread of its own as it starts."""
    try:  # pyarrow imports pandas on first use of many conversions (about 0.3 s) when installed
        import pandas  # noqa: F401
    except Exception:  # noqa: BLE001
        pass


def _become_worker(control: Connection, wakeup: tuple[int, int], request: tuple) -> None:
    """In the forked child: drop the zygote's state, take the engine's context, serve."""
    _, address, authkey, segment_prefix, sys_path, environ, cwd = request
    code = 1
    try:
        set_process_name("ketch-udf")
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the engine; it kills workers
        control.close()
        for fd in wakeup:
            os.close(fd)
        # Python's `random` reseeds itself in a forked child; numpy's global generator, imported
        # by the zygote, does not: without this every worker would draw the same numbers.
        numpy_random = sys.modules.get("numpy.random")
        if numpy_random is not None:
            numpy_random.seed()
        sys.path[:] = sys_path
        os.environ.clear()
        os.environ.update(environ)
        try:
            os.chdir(cwd)
        except OSError:
            pass
        global imported_deferred_itself
        if "pandas" not in sys.modules:
            imported_deferred_itself = True
            # Forked before the zygote's deferred import: import it on a thread while this worker
            # connects, builds its UDF and waits for its first batch, rather than in the first
            # call that converts something (0.4 s added to a query's first batch of each stage).
            import threading

            threading.Thread(target=_preload_deferred, name="ketch-preload", daemon=True).start()
        code = serve(address, authkey, segment_prefix)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _reap(control: Connection, children: set[int]) -> None:
    """Reaps exited workers and reports each exit (OSError: the engine closed the socket)."""
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            children.clear()
            return
        if pid == 0:
            return
        children.discard(pid)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        control.send(("exit", pid, code))


def _told_to_stop(control: Connection) -> bool:
    """Whether a "stop" waits on the control socket (the engine sends it before it closes our
    stdin); False once the engine's end is closed."""
    try:
        while control.poll(0):
            if control.recv()[0] == "stop":
                return True
    except (EOFError, OSError):
        pass
    return False


def zygote(control_fd: int) -> int:
    """The zygote's loop (single-threaded: forks happen with no other Python thread running)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the engine decides when it stops
    set_process_name("ketch-zygote")
    engine = os.getppid()
    _preload()
    from ketch.execution import zygote_fork

    zygote_fork.mark_udf_worker()  # a UDF declared in here (or in a worker) prestarts nothing
    control = Connection(control_fd)
    wakeup = os.pipe()
    for fd in wakeup:
        os.set_blocking(fd, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wakeup[1])
    children: set[int] = set()
    control.send(("ready", os.getpid()))
    deferred = True  # _preload_deferred() still to run
    stopped = False  # the engine said "stop" (else its end means it died)
    try:
        while True:
            try:
                timeout = _DEFERRED_IDLE_S if deferred else None
                readable, _, _ = select.select([control_fd, 0, wakeup[0]], [], [], timeout)
            except InterruptedError:
                continue
            if not readable:  # idle: nobody waits for a fork now
                deferred = False
                _preload_deferred()
                continue
            if wakeup[0] in readable:
                try:
                    while os.read(wakeup[0], 4096):
                        pass
                except BlockingIOError:
                    pass
            if 0 in readable and not os.read(0, 4096):
                stopped = _told_to_stop(control)
                return 0  # the engine died or stopped us
            try:
                _reap(control, children)
                if control_fd not in readable:
                    continue
                request = control.recv()
                if request[0] == "stop":
                    stopped = True
                    return 0
                if request[0] == "fork":
                    if deferred and len(children) >= 4:
                        # A fifth worker in a row: a burst. The deferred imports now, once,
                        # instead of in every worker (12 stages x 2 workers each imported pandas:
                        # 7 CPU-s); the first four (a typical pool) are not held back by it.
                        deferred = False
                        _preload_deferred()
                    sys.stdout.flush()
                    sys.stderr.flush()
                    pid = os.fork()
                    if pid == 0:
                        _become_worker(control, wakeup, request)
                    children.add(pid)
                    control.send(("forked", pid))
            except (EOFError, OSError):
                return 0  # the engine closed its end
            if request[0] == "kill" and request[1] in children:
                try:
                    os.kill(request[1], signal.SIGKILL)
                except ProcessLookupError:
                    pass
    finally:
        for pid in children:  # workers stuck in C code (GIL held) cannot run their own watch
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        if not stopped:
            # The engine died: its descriptors close (our end of file) a moment before the kernel
            # reparents us, so wait for that (bounded) rather than conclude it is still alive.
            deadline = time.monotonic() + _REPARENT_WAIT_S
            while os.getppid() == engine and time.monotonic() < deadline:
                time.sleep(0.005)
        if os.getppid() != engine:
            # The engine died (we were reparented): nobody else will unlink the shared-memory
            # segments it and its workers left (all named ketch-<engine pid>-...).
            from ketch.execution.ipc import reclaim_segments

            reclaim_segments(f"ketch-{engine}-")


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--zygote":
        code = zygote(int(sys.argv[2]))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # at once: no interpreter teardown of numpy, pyarrow, pandas...
    print("usage: python -m ketch.execution.udf_worker --zygote FD", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
