"""A UDF worker process: ``python -m ketch.execution.udf_worker HOST PORT``, with the 32-byte
authentication key on stdin (never on the command line).

It connects back to the engine (multiprocessing.connection, HMAC-authenticated), then serves
requests one at a time:
- ("init", payload): cloudpickled factory; the UDF is built from it on the first batch.
- ("batch", name, size, num_rows): arguments as Arrow IPC in shared memory; replies
  ("ok", name, size) with the result written the same way, or ("error", type name, message,
  traceback text, pickled exception or None).
- ("shutdown",): exits.
"""

from __future__ import annotations

import pickle
import sys
import traceback
from multiprocessing.connection import Client


def main() -> int:
    host, port = sys.argv[1], int(sys.argv[2])
    authkey = bytes.fromhex(sys.stdin.readline().strip())
    conn = Client((host, port), authkey=authkey)

    import cloudpickle

    from ketch.execution.ipc import read_batch, write_batch

    factory = None
    call = None
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return 0  # the engine went away
        kind = message[0]
        if kind == "shutdown":
            conn.close()
            return 0
        if kind == "init":
            factory = cloudpickle.loads(message[1])
            call = None
            continue
        if kind != "batch":
            continue
        _, name, size, num_rows = message
        try:
            args = read_batch(name, size)
            if call is None:
                call = factory()  # __init__ of a class UDF runs here, on the first batch
            result = call(args, num_rows)
            del args
            out_name, out_size = write_batch([result], owned_by_peer=True)
            conn.send(("ok", out_name, out_size))
        except BaseException as exc:  # noqa: BLE001 - reported to the engine
            try:
                pickled = pickle.dumps(exc)
            except Exception:  # noqa: BLE001
                pickled = None
            conn.send(("error", type(exc).__name__, str(exc), traceback.format_exc(), pickled))


if __name__ == "__main__":
    sys.exit(main())
