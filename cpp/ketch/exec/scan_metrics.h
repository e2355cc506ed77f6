#pragma once

#include <atomic>
#include <cstdint>

namespace ketch {

/// What a query's file scans did, summed over its scans: the proof that pruning and limits work.
/// Planning-time pruning (partition values, row-group statistics, limits) is added when the scan
/// starts; the rest is counted while it runs.
struct ScanMetrics {
  std::atomic<int64_t> scan_tasks{0};         ///< tasks started
  std::atomic<int64_t> files_read{0};         ///< distinct files opened
  std::atomic<int64_t> files_pruned{0};       ///< skipped by partition values
  std::atomic<int64_t> row_groups_read{0};    ///< Parquet row groups decoded
  std::atomic<int64_t> row_groups_pruned{0};  ///< skipped by min/max statistics
  std::atomic<int64_t> bytes_read{0};  ///< bytes fetched from files (footers read at planning excluded)
  std::atomic<int64_t> rows_read{0};   ///< rows decoded, before the pushed filter
  /// Video scans: frames the decoders produced (selected or skipped: before start_time, not a
  /// keyframe, between samples), including frames decoded ahead that a limit then left unused.
  std::atomic<int64_t> frames_decoded{0};
  /// Video scans: damaged packets the decoders dropped (the frames around them still came out).
  std::atomic<int64_t> packets_dropped{0};
  /// Thread CPU time of row groups decoded on the compute pool (the executor adds it to the scan
  /// operator's CPU seconds in explain_analyze).
  std::atomic<int64_t> decode_cpu_ns{0};
};

}  // namespace ketch
