"""The engine worker: one long-lived Ray actor per node that runs plan fragments (serialized
optimized logical plans, ``PyPlan.to_bytes``) on Ketch's native executor and returns their output
as Arrow tables through Ray's object store (pyarrow buffers travel without a copy on one node)."""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa


class EngineWorker:
    """Wrapped by ``ray.remote`` in the runner (so this module imports without Ray). Reserves no
    CPU of its own in Ray's accounting: the native executor sizes its thread pools to the node."""

    def __init__(self) -> None:
        import ketch  # noqa: F401  (loads the native module once per worker)

        self.tasks_run = 0

    def info(self) -> dict[str, Any]:
        import ray

        return {"node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid()}

    def run(self, fragment: bytes, config: Any) -> pa.Table:
        """Runs one task: the fragment's bytes, the driver's ExecutionConfig. Returns its output
        (one partition). Raises the engine's error (KetchError and subclasses) unchanged."""
        from ketch import _core
        from ketch.runners.native import read_partitioned, start_udf_workers

        plan = _core.PyPlan.from_bytes(fragment)
        start_udf_workers(plan)
        partitions, reader = plan.execute(config.to_native(), _core.ExecutionStats())
        table, _rows = read_partitioned(partitions, reader)
        self.tasks_run += 1
        return table

    def pid(self) -> int:
        return os.getpid()
