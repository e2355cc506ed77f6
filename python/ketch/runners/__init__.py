"""Runners: where a query's optimized plan runs. The native runner (the default) runs it in this
process on the native executor; the Ray runner (``ketch.set_runner_ray()`` or ``KETCH_RUNNER=ray``)
cuts it into stages and runs their tasks on one engine worker per Ray node (see
``ketch.runners.ray``). The native runner never imports Ray."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Any, Protocol

import pyarrow as pa

from ketch import _core
from ketch._optional import require


class Runner(Protocol):
    name: str

    def execute(
        self, optimized: _core.PyPlan, config: Any, stats: _core.ExecutionStats
    ) -> tuple[pa.Table, list[int]]:
        """Runs an optimized plan (``config``: the Python ExecutionConfig); returns the result and
        its rows per partition."""
        ...

    def stream(
        self, optimized: _core.PyPlan, config: Any, stats: _core.ExecutionStats
    ) -> Iterator[tuple[list[int], pa.RecordBatchReader]]:
        """The output as it is produced: (partition of each batch, batches)."""
        ...


_lock = threading.Lock()
_runner: Any = None


def get_runner() -> Any:
    """The runner the next query uses: the one set last, else ``KETCH_RUNNER`` ("native" or
    "ray"; default native). Raises ValueError for another ``KETCH_RUNNER`` value."""
    global _runner
    with _lock:
        if _runner is None:
            choice = os.environ.get("KETCH_RUNNER", "native").strip().lower() or "native"
            if choice == "native":
                from ketch.runners.native import NativeRunner

                _runner = NativeRunner()
            elif choice == "ray":
                require("ray", "The Ray runner (KETCH_RUNNER=ray)")
                from ketch.runners.ray.runner import RayRunner

                _runner = RayRunner(address=os.environ.get("KETCH_RAY_ADDRESS") or None)
            else:
                raise ValueError(f"KETCH_RUNNER must be 'native' or 'ray', got {choice!r}")
        return _runner


def _replace(new: Any) -> None:
    """Sets the runner (``_lock`` held); the one it replaces stops its idle actor pools."""
    global _runner
    old, _runner = _runner, new
    close = getattr(old, "close_actor_pools", None)
    if close is not None and old is not new:
        close()


def close_actor_pools() -> int:
    """Stops the actor pools the Ray runner keeps idle between queries (``actor_udf_idle_timeout``
    in the execution config); returns how many. 0 on the native runner."""
    with _lock:
        close = getattr(_runner, "close_actor_pools", None)
    return close() if close is not None else 0


def set_runner_native() -> None:
    """Runs the next queries in this process on the native executor (the default)."""
    from ketch.runners.native import NativeRunner

    with _lock:
        _replace(NativeRunner())


def set_runner_ray(
    address: str | None = None,
    noop_if_initialized: bool = False,
    max_task_backlog: int | None = None,
    force_client_mode: bool = False,
    max_shuffle_partitions: int | None = None,
) -> None:
    """Runs the next queries on Ray (Daft's signature). ``address=None`` joins the Ray instance
    this process is connected to, or starts a local one (``ray.init``); an address
    (``"host:port"`` or ``"ray://host:port"``) joins that cluster. One engine worker actor per
    alive node runs the tasks; ``max_task_backlog`` bounds the tasks queued per worker (default 2).
    ``noop_if_initialized``: keep the Ray runner already set. Raises ConnectionError naming the
    address when nothing answers there (checked before ``ray.init``, so it fails fast).
    ``force_client_mode`` is accepted for Daft compatibility (``ray://`` addresses use Ray Client).
    ``max_shuffle_partitions``: the most buckets a hash shuffle (groupby, distinct, join) makes;
    None (default): Daft's widths: a join its widest input's partition count, an aggregation its
    input's, at most ``shuffle_aggregation_default_partitions`` (200); a sort's ranges at most
    max(8, 2 x the cluster's CPUs). ``repartition(n, keys)`` always makes n."""
    require("ray", "The Ray runner (set_runner_ray)")
    from ketch.runners.ray.runner import RayRunner

    with _lock:
        if noop_if_initialized and isinstance(_runner, RayRunner):
            return
        _replace(
            RayRunner(
                address=address,
                max_task_backlog=max_task_backlog,
                max_shuffle_partitions=max_shuffle_partitions,
            )
        )
