"""The UDF actor: one Ray actor holding one instance of a class UDF (an actor-pool UDF's member).

Daft's ``UDFActor`` is the model. The actor is made from the same cloudpickled factory a process-
mode worker gets (``_Runner.worker_factory()``): building it runs the class's ``__init__`` once,
when the actor starts, and each ``eval`` call runs one batch through the UDF's retry / on_error /
timeout_s policy (``ketch.udf._sliced``: at most ``batch_size`` rows per user call). Ray restarts
a dead actor (``max_restarts``) and re-sends the calls it held (``max_task_retries``); a restarted
actor runs ``__init__`` again.

An exception from ``__init__`` does not kill the actor: it is kept and raised by ``ready()`` (and
by every ``eval``), so the driver reports the user's own exception and traceback instead of Ray's
"the actor died in its creation task"."""

from __future__ import annotations

import os
import traceback
from typing import Any

import pyarrow as pa


class UDFActor:
    """``payload``: cloudpickled zero-argument factory → ``call(args, num_rows) -> pa.Array``
    (``args``: one pyarrow Array per UDF argument, each ``num_rows`` long)."""

    def __init__(self, payload: bytes, udf_name: str) -> None:
        import cloudpickle

        import ketch  # noqa: F401  (registers Ketch's Arrow extension types: images, files, ...)
        import ketch.pytype  # noqa: F401

        self.udf_name = udf_name
        self._init_error: BaseException | None = None
        self._init_traceback = ""
        self._call: Any = None
        try:
            self._call = cloudpickle.loads(payload)()  # the class's __init__ runs here
        except BaseException as exc:  # noqa: BLE001 - reported by ready() with its traceback
            self._init_error = exc
            self._init_traceback = traceback.format_exc()

    def ready(self) -> dict[str, Any]:
        """Where this actor runs: node id, pid, the GPU ids Ray assigned and CUDA_VISIBLE_DEVICES.
        Raises the user's ``__init__`` exception (with its traceback as a note) if it failed."""
        import ray

        if self._init_error is not None:
            self._raise_init_error()
        context = ray.get_runtime_context()
        return {
            "node_id": context.get_node_id(),
            "pid": os.getpid(),
            "gpu_ids": [str(g) for g in ray.get_gpu_ids()],
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        }

    def _raise_init_error(self) -> None:
        error = self._init_error
        assert error is not None
        note = f"raised by __init__ of UDF '{self.udf_name}' in its Ray actor (pid {os.getpid()}):\n"
        try:
            error.add_note(note + self._init_traceback)
        except Exception:  # noqa: BLE001 - an exception object that takes no notes
            pass
        raise error

    def eval(self, args: list[pa.Array], num_rows: int) -> pa.Array:
        """One batch: the UDF's output, ``num_rows`` long. Raises the UDF's own exception (after
        its max_retries, unless on_error turned the batch into nulls)."""
        if self._call is None:
            self._raise_init_error()
        try:
            return self._call(args, num_rows)
        except BaseException as exc:
            from tblib import pickling_support

            pickling_support.install(exc)  # the frames travel with the pickled exception
            try:
                exc.add_note(
                    f"raised in a Ray actor of UDF '{self.udf_name}' (pid {os.getpid()}); its traceback:\n"
                    + traceback.format_exc()
                )
            except Exception:  # noqa: BLE001
                pass
            raise

    def pid(self) -> int:
        return os.getpid()
