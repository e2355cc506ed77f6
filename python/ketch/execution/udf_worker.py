"""A UDF worker process: ``python -m ketch.execution.udf_worker SOCKET_PATH SEGMENT_PREFIX``, with
the 32-byte authentication key on stdin (never on the command line); its shared-memory segments
are named ``SEGMENT_PREFIX-<n>`` so the engine can unlink them if the worker is killed.

It connects back to the engine (multiprocessing.connection, HMAC-authenticated), then serves
requests one at a time:
- ("init", payload): cloudpickled factory; the UDF is built from it on the first batch.
- ("batch", segment, size, num_rows, max_items): arguments as Arrow IPC in the engine's shared-memory segment;
  replies ("ok", segment, size) with the result in this worker's own segment, or ("error", type
  name, message, traceback text, pickled exception or None).
- ("shutdown",): unlinks its segment and exits.
"""

from __future__ import annotations

import pickle
import sys
import traceback
from multiprocessing.connection import Client


def _exit_with_parent() -> None:
    """The engine keeps this worker's stdin open for as long as its process lives: end of file
    means the engine died, so the worker exits at once (even in the middle of a UDF call) and no
    orphan stays behind. (PR_SET_PDEATHSIG would fire when the engine *thread* that started the
    worker exits, killing healthy workers of a live engine.)"""
    import os
    import threading

    def watch() -> None:
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        os._exit(0)

    threading.Thread(target=watch, name="ketch-parent-watch", daemon=True).start()


def main() -> int:
    address = sys.argv[1]
    authkey = bytes.fromhex(sys.stdin.readline().strip())
    _exit_with_parent()
    conn = Client(address, family="AF_UNIX", authkey=authkey)

    import cloudpickle
    import pyarrow as pa

    import ketch  # noqa: F401  (registers Ketch's Arrow extension types: images, files, ...)
    import ketch.pytype  # noqa: F401  (Python-object columns arrive as objects, not pickles)
    from ketch.execution.ipc import HANDOFF_BYTES, Inbox, Outbox, deserialize

    inbox, outbox = Inbox(), Outbox(sys.argv[2] if len(sys.argv) > 2 else None)
    factory = None
    init_error: BaseException | None = None
    call = None
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
                try:
                    factory = cloudpickle.loads(message[1])
                    init_error = None
                except BaseException as exc:  # noqa: BLE001 - reported with the first batch
                    factory, init_error = None, exc
                call = None
                continue
            if kind != "batch":
                continue
            _, name, size, num_rows, max_items = message
            try:
                args = deserialize(inbox.take(name, size))
                if factory is None:
                    raise RuntimeError(
                        "the UDF could not be loaded in its worker process: "
                        f"{type(init_error).__name__}: {init_error}"
                    ) from init_error
                if call is None:
                    call = factory()  # __init__ of a class UDF runs here, on the first batch
                from ketch.udf import _MAX_ITEMS

                _MAX_ITEMS.set(max_items)  # generators: items per row a limit above still needs
                result = call(args, num_rows)
                del args
                if result.nbytes >= HANDOFF_BYTES:
                    # Blobs the UDF built and dropped on the way (pyarrow's chunks of a result over
                    # 2 GiB, say) go back to the system before the result is copied to the segment.
                    pa.default_memory_pool().release_unused()
                out_name, out_size = outbox.put_arrays([result])
                del result  # a handed-off result lives on in the engine's mapping only
                conn.send(("ok", out_name, out_size))
            except BaseException as exc:  # noqa: BLE001 - reported to the engine
                try:
                    pickled = pickle.dumps(exc)
                except Exception:  # noqa: BLE001
                    pickled = None
                conn.send(("error", type(exc).__name__, str(exc), traceback.format_exc(), pickled))
    finally:
        outbox.close()
        inbox.close()
        conn.close()


if __name__ == "__main__":
    sys.exit(main())
