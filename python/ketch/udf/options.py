"""The options a UDF decorator takes (``_Options``), checked once at plan time: batch size,
concurrency, CPUs / GPUs / memory against this machine (or left to the Ray runner), retries,
``on_error``, ``timeout_s``; the default rows per call."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from ketch.datatype import DataType

# Rows per call when a UDF sets no batch_size: functions that take Series get large batches (the
# per-call cost is paid once per batch), row-wise ones small (their cost is per row; small batches
# spread over the UDF's workers). The planner cuts both so an input of known size reaches every
# worker.
_DEFAULT_BATCH_ROWS = 128 * 1024  # the engine's default morsel (Daft's too)


_DEFAULT_ROW_WISE_BATCH_ROWS = 512


_ASYNC_WORKER_THREADS = 4  # engine threads with a batch on an async UDF's event loop at once


@dataclasses.dataclass(frozen=True)
class _Options:
    """What a UDF decorator was given, checked once."""

    return_dtype: DataType
    batch_size: int | None = None
    concurrency: int | None = None
    num_cpus: float | None = None
    num_gpus: float = 0.0
    memory_bytes: int | None = None
    max_retries: int = 0
    on_error: str = "raise"
    use_process: bool | None = None
    is_async: bool = False
    timeout_s: float | None = None
    ray_options: dict[str, Any] | None = None
    concurrency_given: bool = False  # the user set concurrency / max_concurrency


def _ray_runner_configured() -> bool:
    """True when the next query runs on the Ray runner (set, or chosen by KETCH_RUNNER)."""
    from ketch import runners

    current = runners._runner
    if current is not None:
        return getattr(current, "name", "") == "ray"
    return os.environ.get("KETCH_RUNNER", "").strip().lower() == "ray"


def _available_gpus() -> int:
    """GPUs this machine offers: CUDA_VISIBLE_DEVICES when set, else what nvidia-smi lists."""
    from ketch.execution.gpu_slices import visible_gpus

    return len(visible_gpus())


def _check_options(name: str, options: _Options) -> _Options:
    """Validates the options and fills the concurrency from the resource request (plan time)."""
    _check_positive("batch_size", options.batch_size)
    _check_positive("concurrency", options.concurrency)
    if options.max_retries < 0 or not isinstance(options.max_retries, int):
        raise ValueError(f"max_retries must be an int >= 0, got {options.max_retries!r}")
    if options.on_error not in ("raise", "log", "ignore"):
        raise ValueError(f"on_error must be 'raise', 'log' or 'ignore', got {options.on_error!r}")
    if options.timeout_s is not None and (
        isinstance(options.timeout_s, bool)
        or not isinstance(options.timeout_s, int | float)
        or options.timeout_s <= 0
    ):
        raise ValueError(f"timeout_s must be a number of seconds > 0, got {options.timeout_s!r}")
    for field, value in (("cpus", options.num_cpus), ("gpus", options.num_gpus)):
        if value is not None and (not isinstance(value, int | float) or value < 0):
            raise ValueError(f"{field} must be a number >= 0, got {value!r}")
    if options.ray_options is not None and not isinstance(options.ray_options, dict):
        raise ValueError(f"ray_options must be a dict of Ray actor options, got {options.ray_options!r}")
    concurrency = options.concurrency
    options = dataclasses.replace(options, concurrency_given=concurrency is not None)
    if _ray_runner_configured():
        # The Ray runner checks the request against the cluster's nodes when a query starts, and
        # sizes a GPU pool without concurrency from the cluster's GPUs (ketch.runners.ray.actor_pool).
        return options
    cpus = os.cpu_count() or 1
    if options.num_gpus:
        gpus = _available_gpus()
        if concurrency is None:
            concurrency = max(1, int(gpus // options.num_gpus)) if gpus else 1
        wanted = options.num_gpus * concurrency
        if wanted > gpus:
            raise ValueError(
                f"UDF '{name}' asks for {options.num_gpus} GPU(s) x {concurrency} instance(s) = "
                f"{wanted} GPUs, but this machine has {gpus}"
            )
    if options.num_cpus and options.num_cpus > cpus:
        raise ValueError(
            f"UDF '{name}' asks for {options.num_cpus} CPUs per instance; this machine has {cpus}"
        )
    if concurrency is None and options.num_cpus:
        concurrency = max(1, int(cpus // options.num_cpus))
    # Otherwise (None): one worker thread (they share the GIL), or in process mode one worker
    # process per CPU, decided in _udf_expression once the mode is known.
    return dataclasses.replace(options, concurrency=concurrency)


def _check_positive(name: str, value: int | None) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def _arrow_representable(dtype: DataType) -> bool:
    return dtype.extension_name != "ketch.python"
