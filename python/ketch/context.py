"""Execution configuration: the knobs of the native executor, global or scoped to a ``with`` block."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
import threading
from collections.abc import Iterator

from ketch import _core


@dataclasses.dataclass(frozen=True)
class ExecutionConfig:
    """Fields of the native executor. ``0`` means "pick for this machine".

    - ``morsel_size_rows``: rows per morsel that sources aim for (default 131072, Daft's).
      Operators that do heavy work per row (image kernels, UDFs) ask for smaller morsels.
    - ``max_morsels_in_flight``: bound of the pipeline's channels; the source waits when it is
      reached (backpressure). Default ``2 x compute threads + 2``.
    - ``num_compute_threads``: threads of the compute pool (default: one per available core).
    - ``num_io_threads``: threads of the I/O pool (default 8).
    - ``memory_budget_bytes``: bytes the query may hold (morsels in flight plus what sort and
      aggregate keep); past half of it those blocking sinks spill to ``spill_dir`` (Arrow IPC files).
      Default: half of the machine's physical memory.
    - ``spill_dir``: where spill files go (default ``$TMPDIR/ketch-spill``); a directory that cannot
      be written fails the query with its path before any data is read.
    - ``scan_tasks_min_size_bytes`` / ``scan_tasks_max_size_bytes``: a scan task (one partition)
      is made of whole Parquet row groups, or whole CSV/JSON files; small files and row groups are
      merged up to the minimum and a Parquet file is split by row group at the maximum (bytes: the
      compressed column chunks read, or the CSV/JSON file size; Daft's defaults 96 MiB and 384 MiB).
      Below an expensive pipeline (UDFs, URL downloads, image kernels) tasks are cut smaller so that
      every worker gets at least two, splitting a large row group by row ranges if need be (the row
      group is still fetched and decoded once).
    - ``max_sources_per_scan_task``: at most this many files are merged into one scan task
      (an int >= 1; Daft's default 10).
    - ``enable_progress_bar``: tqdm progress bars (one per operator) on stderr for queries running
      longer than ``progress_bar_delay_seconds``; never shown when stderr is not a terminal.

    Fields of the Ray runner's shuffles (Daft's names and defaults):

    - ``shuffle_algorithm``: "map_reduce" (each of M map tasks partitions its output into N
      buckets in Ray's object store: M x N objects), "pre_shuffle_merge" (map outputs are first
      merged per node, up to ``pre_shuffle_merge_threshold`` bytes, by a task on that node, and
      only the merged outputs are partitioned: far fewer, larger objects) or "auto" (default):
      pre_shuffle_merge when sqrt(M x N) > ``pre_shuffle_merge_partition_threshold`` (200),
      else map_reduce. "flight_shuffle": map tasks write their buckets to local disk (Arrow IPC
      files under ``flight_shuffle_dirs``) and each engine worker serves them with an Arrow
      Flight server; reduce tasks fetch their bucket over Flight, so a shuffle larger than
      Ray's object store still runs (hash and random shuffles; a sort's range shuffle still
      uses the object store). "auto" never picks it.
    - ``pre_shuffle_merge_threshold``: bytes of map output merged into one partitioning task
      (default 1 GiB).
    - ``actor_udf_ready_timeout``: seconds the Ray runner waits for an actor-pool UDF's actors to
      start (``__init__`` done) before the query fails; it runs with those ready by then (default
      120, as in Daft).
    - ``actor_udf_idle_timeout``: seconds an actor pool stays alive after a successful query, so
      that the next query of the same Ray runner with the same UDF (same class and init
      arguments, same resources) reuses its actors instead of loading the model again (default
      300; 0 stops each query's pools when it ends). A failed or cancelled query's pools are
      always stopped; ``ketch.runners.close_actor_pools()`` stops the idle ones at once.
    - ``flight_shuffle_dirs``: a list (or tuple) of directories on each node for the flight
      shuffle's files; map task i writes into dir i mod len(dirs). Default
      ``[<system temp dir>/ketch_flight_shuffle]``. Each query writes under
      ``<dir>/ketch-shuffle-<query id>/``, deleted when the query ends (success, failure,
      cancel). A non-list value or an empty / non-str entry is a ValueError.
    - ``flight_shuffle_compression``: "lz4" (default, as Daft), "zstd", or None / "none" (no
      compression) for the shuffle files and the Flight stream; anything else is a ValueError.
    """

    morsel_size_rows: int = 128 * 1024
    max_morsels_in_flight: int = 0
    num_compute_threads: int = 0
    num_io_threads: int = 0
    memory_budget_bytes: int = 0
    spill_dir: str = ""
    scan_tasks_min_size_bytes: int = 96 * 1024 * 1024
    scan_tasks_max_size_bytes: int = 384 * 1024 * 1024
    max_sources_per_scan_task: int = 10
    enable_progress_bar: bool = True
    progress_bar_delay_seconds: float = 1.0
    shuffle_algorithm: str = "auto"
    pre_shuffle_merge_threshold: int = 1 << 30
    pre_shuffle_merge_partition_threshold: int = 200
    actor_udf_ready_timeout: int = 120
    actor_udf_idle_timeout: float = 300.0
    flight_shuffle_dirs: list[str] = dataclasses.field(
        default_factory=lambda: [os.path.join(tempfile.gettempdir(), "ketch_flight_shuffle")]
    )
    flight_shuffle_compression: str | None = "lz4"
    # Daft knobs without a native field (see ketch.execution_knobs), as (name, value) pairs.
    daft_options: tuple[tuple[str, object], ...] = ()

    def daft_value(self, name: str) -> object:
        """The value of a Daft-only knob (``num_preview_rows``, ``enable_dynamic_batching``...):
        the one set, else Daft's default. KeyError for a name Daft's config does not have."""
        from ketch import execution_knobs

        for key, value in self.daft_options:
            if key == name:
                return value
        return execution_knobs.default(name)

    def __getattr__(self, name: str) -> object:
        # Daft's knob names read like fields (``config.default_morsel_size``).
        from ketch import execution_knobs

        if name in execution_knobs.RENAMED:
            return getattr(self, execution_knobs.RENAMED[name])
        if execution_knobs.is_daft_only(name):
            return self.daft_value(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def to_native(self) -> _core.ExecutionConfig:
        native = _core.ExecutionConfig()
        native_ints = (
            "morsel_size_rows",
            "max_morsels_in_flight",
            "num_compute_threads",
            "num_io_threads",
            "memory_budget_bytes",
            "scan_tasks_min_size_bytes",
            "scan_tasks_max_size_bytes",
            "max_sources_per_scan_task",
        )
        for name in native_ints:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"execution config field {name} must be an int >= 0, got {value!r}")
            setattr(native, name, value)
        if not isinstance(self.spill_dir, str):
            raise ValueError(f"spill_dir must be a str, got {self.spill_dir!r}")
        native.spill_dir = self.spill_dir
        if self.scan_tasks_min_size_bytes > self.scan_tasks_max_size_bytes:
            raise ValueError("scan_tasks_min_size_bytes must not exceed scan_tasks_max_size_bytes")
        if self.max_sources_per_scan_task < 1:
            raise ValueError(
                f"max_sources_per_scan_task must be >= 1, got {self.max_sources_per_scan_task!r}"
            )
        if self.progress_bar_delay_seconds < 0:
            raise ValueError("progress_bar_delay_seconds must be >= 0")
        if self.shuffle_algorithm not in ("auto", "map_reduce", "pre_shuffle_merge", "flight_shuffle"):
            raise ValueError(
                "shuffle_algorithm must be 'auto', 'map_reduce', 'pre_shuffle_merge' or 'flight_shuffle', "
                f"got {self.shuffle_algorithm!r}"
            )
        if (
            not isinstance(self.actor_udf_ready_timeout, int | float)
            or isinstance(self.actor_udf_ready_timeout, bool)
            or self.actor_udf_ready_timeout <= 0
        ):
            value = self.actor_udf_ready_timeout
            raise ValueError(f"actor_udf_ready_timeout must be a number of seconds > 0, got {value!r}")
        idle = self.actor_udf_idle_timeout
        if not isinstance(idle, int | float) or isinstance(idle, bool) or not idle >= 0:
            raise ValueError(f"actor_udf_idle_timeout must be a number of seconds >= 0, got {idle!r}")
        self._check_flight_shuffle()
        for name in ("pre_shuffle_merge_threshold", "pre_shuffle_merge_partition_threshold"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"execution config field {name} must be an int >= 1, got {value!r}")
        return native

    def _check_flight_shuffle(self) -> None:
        """ValueError unless ``flight_shuffle_dirs`` is a non-empty list/tuple of non-empty str
        and ``flight_shuffle_compression`` is "lz4", "zstd", "none" or None."""
        dirs = self.flight_shuffle_dirs
        if not isinstance(dirs, (list, tuple)) or not dirs:
            raise ValueError(f"flight_shuffle_dirs must be a non-empty list of directories, got {dirs!r}")
        for d in dirs:
            if not isinstance(d, str) or not d:
                raise ValueError(f"flight_shuffle_dirs entries must be non-empty str paths, got {d!r}")
        if self.flight_shuffle_compression not in ("lz4", "zstd", "none", None):
            raise ValueError(
                "flight_shuffle_compression must be 'lz4', 'zstd', 'none' or None, "
                f"got {self.flight_shuffle_compression!r}"
            )


_lock = threading.Lock()
_config = ExecutionConfig()


def get_execution_config() -> ExecutionConfig:
    """The configuration the next query will run with."""
    return _config


# Ketch's fields whose None means something (not "unchanged").
_NONE_IS_A_VALUE = frozenset({"flight_shuffle_compression"})


def set_execution_config(
    config: ExecutionConfig | None = None, **fields: int | float | bool | str | list[str] | None
) -> ExecutionConfig:
    """Sets the global execution config from ``config`` and/or keyword fields; returns the old one.

    Takes Ketch's fields (see ``ExecutionConfig``) and every keyword of Daft's
    ``set_execution_config``: Daft's names are translated where Ketch has the knob
    (``default_morsel_size`` → ``morsel_size_rows``...), ``num_preview_rows`` sets the rows
    ``repr(df)`` shows, and the others are accepted, kept and ignored with one ``UserWarning``
    per knob; ``ketch.execution_knobs`` lists which are which.

    A field given as None is left as it is (Daft's "unchanged", e.g.
    ``execution_config_ctx(default_morsel_size=None)``), except a Ketch field for which None is
    a value (``flight_shuffle_compression=None``: no compression).

    Raises ``TypeError`` for unknown fields and ``ValueError`` for negative values.
    """
    from ketch import execution_knobs

    global _config
    fields = {name: value for name, value in fields.items() if value is not None or name in _NONE_IS_A_VALUE}
    native_names = {f.name for f in dataclasses.fields(ExecutionConfig)} - {"daft_options"}
    fields, daft = execution_knobs.split_fields(fields, native_names)
    with _lock:
        old = _config
        base = config or old
        if daft:
            merged = dict(base.daft_options)
            merged.update(daft)
            fields["daft_options"] = tuple(merged.items())
        new = dataclasses.replace(base, **fields)
        new.to_native()  # validates
        _config = new
        return old


@contextlib.contextmanager
def execution_config_ctx(**fields: int | float | bool | str | list[str] | None) -> Iterator[ExecutionConfig]:
    """Runs the block with some execution-config fields changed, then restores the previous config."""
    old = set_execution_config(**fields)
    try:
        yield get_execution_config()
    finally:
        set_execution_config(old)


class KetchContext:
    """The global context (Daft's ``DaftContext``): ``daft_execution_config`` is the
    :class:`ExecutionConfig` the next query runs with, ``daft_planning_config`` the planning
    settings (``default_io_config``). Get it with :func:`get_context`."""

    @property
    def daft_execution_config(self) -> ExecutionConfig:
        return get_execution_config()

    @property
    def daft_planning_config(self) -> PlanningConfig:
        return _planning

    def __repr__(self) -> str:
        return f"KetchContext(daft_execution_config={get_execution_config()!r})"


DaftContext = KetchContext  # Daft's name


@dataclasses.dataclass(frozen=True)
class PlanningConfig:
    """Daft's planning config: ``default_io_config`` and ``enable_strict_filter_pushdown`` are
    accepted and kept so Daft code ports, but Ketch's readers do not consult them yet (pass
    ``io_config=`` to each read)."""

    default_io_config: object = None
    enable_strict_filter_pushdown: bool = False


_planning = PlanningConfig()
_context = KetchContext()


def get_context() -> KetchContext:
    """The global context (Daft's ``daft.context.get_context()``)."""
    return _context


def set_planning_config(
    config: PlanningConfig | None = None,
    default_io_config: object = None,
    enable_strict_filter_pushdown: bool | None = None,
) -> KetchContext:
    """Sets the planning config (Daft's ``set_planning_config``); returns the context."""
    global _planning
    with _lock:
        base = config or _planning
        changes: dict[str, object] = {}
        if default_io_config is not None:
            changes["default_io_config"] = default_io_config
        if enable_strict_filter_pushdown is not None:
            changes["enable_strict_filter_pushdown"] = bool(enable_strict_filter_pushdown)
        _planning = dataclasses.replace(base, **changes)  # type: ignore[arg-type]
    return _context


@contextlib.contextmanager
def planning_config_ctx(**fields: object) -> Iterator[PlanningConfig]:
    """Runs the block with some planning-config fields changed, then restores the previous ones."""
    old = _planning
    set_planning_config(**fields)  # type: ignore[arg-type]
    try:
        yield _planning
    finally:
        set_planning_config(config=old)
