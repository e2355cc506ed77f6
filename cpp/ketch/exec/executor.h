#pragma once

#include <arrow/api.h>

#include <atomic>
#include <memory>
#include <vector>

#include "ketch/common/config.h"
#include "ketch/plan/physical/physical_plan.h"

namespace ketch {

/// Counters of one run, for tests and explain_analyze.
struct ExecutionStats {
  std::atomic<int64_t> morsels_emitted{0};
  std::atomic<int64_t> rows_emitted{0};
  std::atomic<int64_t> max_morsels_in_flight{0};
};

/// Runs a physical plan with the push-based, morsel-driven executor and returns the root's output
/// batches in source order.
///
/// The plan is cut into pipelines at order-sensitive operators (limit, the final sink). The source
/// runs on the I/O pool and cuts its batches into morsels; each morsel is pushed through the
/// pipeline's intermediate operators as a chain of tasks, each on its operator's executor (the
/// compute pool, or a UDF's own workers), so many morsels are in flight at once. A sink receives
/// morsels in source order (a re-order buffer in front of it). Backpressure: the source must take a
/// permit for each morsel and blocks when `max_morsels_in_flight` are in the pipeline; a permit
/// returns when its morsel leaves the last sink. The first error cancels the source, waits for the
/// morsels in flight, and is returned.
arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> ExecutePlan(const PhysicalPlanPtr& plan,
                                                                            const ExecutionConfig& config,
                                                                            ExecutionStats* stats = nullptr);

}  // namespace ketch
