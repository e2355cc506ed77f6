#pragma once

#include <arrow/api.h>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ketch/common/config.h"
#include "ketch/common/memory_manager.h"
#include "ketch/exec/scan_metrics.h"
#include "ketch/exec/sinks/sinks.h"
#include "ketch/plan/physical/physical_plan.h"

namespace ketch {

/// Counters of one operator in one run (explain_analyze, progress bars). CPU time is thread CPU
/// time (CLOCK_THREAD_CPUTIME_ID) spent inside the operator, summed over its workers; for a source
/// it includes decoding the file, not the time spent waiting for channel space.
struct OperatorMetrics {
  std::string name;
  int32_t pipeline = 0;
  std::atomic<int64_t> morsels{0};
  std::atomic<int64_t> rows_in{0};
  std::atomic<int64_t> rows_out{0};
  std::atomic<int64_t> bytes_out{0};
  std::atomic<int64_t> cpu_ns{0};
  /// Budget bytes held by the operator's outputs in flight (sources, intermediate operators) or by
  /// its buffered state (blocking sinks); `memory.peak` is the operator's peak memory.
  MemoryTracker memory;
};

/// Counters of one run, for tests, explain_analyze and progress bars. Readable while the query
/// runs (all fields are atomics; `operators` only grows, under `mutex`).
struct ExecutionStats {
  std::atomic<int64_t> morsels_emitted{0};
  std::atomic<int64_t> rows_emitted{0};
  std::atomic<int64_t> max_morsels_in_flight{0};
  std::atomic<bool> finished{false};
  /// Set from another thread (e.g. on Ctrl-C) to stop the query: it fails with Cancelled soon after
  /// (operators finish the morsel they are working on).
  std::atomic<bool> cancel_requested{false};
  /// Turns true with `cancel_requested` or when the query fails: calls that wait on user code or
  /// on the network (UDFs, downloads) poll it and give up (EvalContext::cancelled points here).
  std::atomic<bool> stop_calls{false};
  /// Highest number of bytes charged to the query's memory budget at once.
  std::atomic<int64_t> peak_memory_bytes{0};
  /// What the query's file scans read and skipped.
  ScanMetrics scan;

  std::mutex mutex;
  std::deque<OperatorMetrics> operators;  // deque: stable addresses

  OperatorMetrics* Register(const std::string& name, int32_t pipeline) {
    std::lock_guard<std::mutex> lock(mutex);
    operators.emplace_back();
    operators.back().name = name;
    operators.back().pipeline = pipeline;
    return &operators.back();
  }
};

/// Runs a physical plan with the push-based, morsel-driven executor and returns the root's output
/// batches in source order.
///
/// The plan is cut into pipelines at blocking operators. The source runs on the I/O pool and cuts
/// its batches into morsels; where an operator's morsel size range (PhysicalNode::min/max_morsel_rows)
/// does not admit what arrives, an ordered re-chunk step splits or coalesces morsels in front of it; each
/// morsel is pushed through the pipeline's intermediate operators as a chain of tasks, each on its operator's
/// executor (the compute pool, or a UDF's own workers), so many morsels are in flight at once. A sink
/// receives morsels in source order (a re-order buffer in front of it). Backpressure: the source must take a
/// permit for each morsel and blocks when `max_morsels_in_flight` are in the pipeline; a permit
/// returns when its morsel leaves the last sink. The first error cancels the source, waits for the
/// morsels in flight, and is returned.
arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> ExecutePlan(const PhysicalPlanPtr& plan,
                                                                            const ExecutionConfig& config,
                                                                            ExecutionStats* stats = nullptr);

/// Like ExecutePlan, but the root's output goes to `consumer` while the query runs, partition by
/// partition in order (an empty batch announces a partition; a write's paths come at the end, in
/// partition 0), and the returned vector is empty. A consumer error stops the query.
arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> ExecutePlanInto(const PhysicalPlanPtr& plan,
                                                                                const ExecutionConfig& config,
                                                                                ExecutionStats* stats,
                                                                                ResultConsumer* consumer);

}  // namespace ketch
