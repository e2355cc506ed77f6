"""Daft's ``set_execution_config`` knobs, and what Ketch does with each.

Ketch accepts every keyword Daft's ``daft.set_execution_config`` takes (current and recent
releases), so a Daft program's config call ports unchanged:

- honoured under Ketch's own field: ``default_morsel_size`` (→ ``morsel_size_rows``);
  ``shuffle_algorithm`` "ray" (→ "auto": Ray object-store shuffles) and "flight"
  (→ "flight_shuffle"), besides Ketch's own values; ``pre_shuffle_merge`` "always" / "never" /
  "auto" (→ ``shuffle_algorithm`` "pre_shuffle_merge" / "map_reduce" / "auto");
- honoured as they are (same name in Ketch): ``scan_tasks_min_size_bytes``,
  ``scan_tasks_max_size_bytes``, ``max_sources_per_scan_task``, ``pre_shuffle_merge_threshold``,
  ``pre_shuffle_merge_partition_threshold``, ``actor_udf_ready_timeout``, ``flight_shuffle_dirs``,
  ``flight_shuffle_compression``, ``num_preview_rows`` (rows ``repr(df)`` and the notebook
  table show, default 8) and ``shuffle_aggregation_default_partitions`` (the most reduce
  partitions of a groupby / distinct / window shuffle on Ray, default 200);
- accepted and ignored (``IGNORED``): the value is kept (readable as an attribute of the
  config) but changes nothing; the first time each one is set, a ``UserWarning`` says so.

An unknown keyword raises ``TypeError`` as Python does for Daft's function.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

# Daft knobs with no Ketch counterpart, with Daft's defaults.
IGNORED: dict[str, Any] = {
    "enable_scan_task_split_and_merge": True,
    "broadcast_join_size_bytes_threshold": 10 * 1024 * 1024,
    "parquet_split_row_groups_max_files": 10,
    "hash_join_partition_size_leniency": 0.5,
    "sample_size_for_sort": 20,
    "parquet_target_filesize": 512 * 1024 * 1024,
    "parquet_target_row_group_size": 128 * 1024 * 1024,
    "parquet_inflation_factor": 3.0,
    "csv_target_filesize": 512 * 1024 * 1024,
    "csv_inflation_factor": 0.5,
    "json_target_filesize": 512 * 1024 * 1024,
    "json_inflation_factor": 0.25,
    "text_inflation_factor": 1.0,
    "partial_aggregation_threshold": 10000,
    "high_cardinality_aggregation_threshold": 0.8,
    "read_sql_partition_size_bytes": 512 * 1024 * 1024,
    "scantask_max_parallel": 8,
    "native_parquet_writer": True,
    "min_cpu_per_task": 0.5,
    "worker_startup_timeout": 120,
    "maintain_order": True,
    "enable_dynamic_batching": False,
    "dynamic_batching_strategy": "auto",
    "flight_shuffle_size_threshold_bytes": 25 * 1024**3,
    "flight_shuffle_seal": "auto",
    "flight_shuffle_seal_partition_threshold": 4096,
    "enable_multi_glob_path_tasks": False,
    # knobs of earlier Daft releases
    "enable_aqe": False,
    "enable_native_executor": True,
    "enable_ray_tracing": False,
    "scantask_splitting_level": 1,
    "use_experimental_distributed_engine": True,
    "use_legacy_ray_runner": False,
}

# Daft knobs Ketch honours outside ExecutionConfig's native fields, with Daft's defaults.
KEPT: dict[str, Any] = {"num_preview_rows": 8, "shuffle_aggregation_default_partitions": 200}

# Daft knob -> Ketch field of the same meaning.
RENAMED = {"default_morsel_size": "morsel_size_rows"}

_SHUFFLE_ALGORITHMS = {"ray": "auto", "flight": "flight_shuffle"}
_PRE_SHUFFLE_MERGE = {"always": "pre_shuffle_merge", "never": "map_reduce", "auto": "auto"}

_warned: set[str] = set()
_warned_lock = threading.Lock()


def split_fields(fields: dict[str, Any], native_names: set[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Splits ``set_execution_config`` keywords into (Ketch fields, Daft-only values), translating
    Daft's names and values. Warns once per ignored knob; raises TypeError for unknown ones and
    ValueError for a bad ``pre_shuffle_merge``."""
    native: dict[str, Any] = {}
    daft: dict[str, Any] = {}
    for name, value in fields.items():
        if name in native_names:
            native[name] = value
        elif name in RENAMED:
            native[RENAMED[name]] = value
        elif name == "pre_shuffle_merge":
            if value not in _PRE_SHUFFLE_MERGE:
                raise ValueError(f"pre_shuffle_merge must be 'auto', 'always' or 'never', got {value!r}")
            if "shuffle_algorithm" not in fields:
                native["shuffle_algorithm"] = _PRE_SHUFFLE_MERGE[value]
            daft[name] = value
        elif name in KEPT:
            daft[name] = value
        elif name in IGNORED:
            daft[name] = value
            _warn_once(name)
        else:
            raise TypeError(f"set_execution_config() got an unexpected keyword argument '{name}'")
    if native.get("shuffle_algorithm") in _SHUFFLE_ALGORITHMS:
        native["shuffle_algorithm"] = _SHUFFLE_ALGORITHMS[native["shuffle_algorithm"]]
    if "num_preview_rows" in daft:
        rows = daft["num_preview_rows"]
        if not isinstance(rows, int) or isinstance(rows, bool) or rows < 0:
            raise ValueError(f"num_preview_rows must be an int >= 0, got {rows!r}")
    return native, daft


def default(name: str) -> Any:
    """Daft's default of a Daft-only knob (KeyError for other names)."""
    if name in KEPT:
        return KEPT[name]
    if name == "pre_shuffle_merge":
        return "auto"
    return IGNORED[name]


def is_daft_only(name: str) -> bool:
    return name in KEPT or name in IGNORED or name == "pre_shuffle_merge"


def _warn_once(name: str) -> None:
    with _warned_lock:
        if name in _warned:
            return
        _warned.add(name)
    warnings.warn(
        f"set_execution_config: Ketch accepts Daft's {name!r} but ignores it (no effect on execution)",
        UserWarning,
        stacklevel=4,
    )
