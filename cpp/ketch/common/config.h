#pragma once

#include <cstdint>
#include <string>

namespace ketch {

/// Knobs of one query's execution. Python's `ketch.set_execution_config` fills this struct.
struct ExecutionConfig {
  /// Rows per morsel that sources and re-chunking aim for (Daft's default morsel is 128Ki rows).
  int64_t morsel_size_rows = 128 * 1024;
  /// Maximum number of morsels between a source and its sink at any time (the bound of the pipeline's
  /// channels; the source waits when it is reached: backpressure).
  int64_t max_morsels_in_flight = 0;  // 0 = 2 x compute threads + 2
  /// Threads of the compute pool (decode, resize, expression evaluation). 0 = one per core.
  int32_t num_compute_threads = 0;
  /// Threads of the I/O pool (file reads, downloads). 0 = 8.
  int32_t num_io_threads = 0;
  /// Bytes the query may hold in memory: morsels in flight plus what blocking sinks (sort,
  /// aggregate, join) keep. Blocking sinks that outgrow half of it spill to `spill_dir`.
  /// 0 = half of the machine's physical memory.
  int64_t memory_budget_bytes = 0;
  /// Directory for spill files (Arrow IPC); "" = $TMPDIR or /tmp. Must be writable.
  std::string spill_dir;
  /// Scan tasks: small Parquet row groups are merged into tasks of at least this many bytes
  /// (compressed bytes of the columns read; Daft's default 96 MiB) ...
  int64_t scan_tasks_min_size_bytes = 96LL << 20;
  /// ... and files larger than this are split by row group (Daft's default 384 MiB).
  int64_t scan_tasks_max_size_bytes = 384LL << 20;
  /// At most this many files are merged into one scan task (Daft's default 10).
  int32_t max_sources_per_scan_task = 10;

  /// Returns a copy with every 0 ("auto") field replaced by its machine-dependent default.
  ExecutionConfig Resolved() const;
};

/// Number of cores this process may use (sched_getaffinity, falling back to hardware_concurrency).
int32_t AvailableCores();

}  // namespace ketch
