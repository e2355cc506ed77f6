#include "ketch/exec/morsel_sizing.h"

#include "ketch/exec/pipeline_run.h"

namespace ketch::exec {

int64_t MorselsInFlight(const Pipeline& pipeline, const ExecutionConfig& config, bool auto_bound) {
  if (!auto_bound) return config.max_morsels_in_flight;
  int64_t own = 0;
  for (const auto& segment : pipeline.segments) {
    for (const auto& op : segment->ops) own += op->own_workers();
  }
  return own == 0 ? config.max_morsels_in_flight
                  : std::max<int64_t>(config.max_morsels_in_flight, own + config.num_compute_threads + 2);
}

// --- PipelineRun: adaptive morsel sizes ---

// Rows per morsel entering segment `seg`: `static_max`, or fewer when the segment's operators
// are seen to produce so many bytes per row that a morsel would outgrow its share of the budget.
// Before the first observation, its morsels are probes (kProbeDivisor).
int64_t PipelineRun::AdaptiveRows(size_t seg, int64_t static_max) const {
  if (seg >= sizing_.size() || !sizing_[seg]->adaptive || static_max <= 1) return static_max;
  const double per_row = sizing_[seg]->bytes_per_row.load();
  if (per_row <= 0) return std::max<int64_t>(1, static_max / kProbeDivisor);
  const double fit = static_cast<double>(target_morsel_bytes_) / per_row;
  return fit >= static_cast<double>(static_max) ? static_max
                                                : std::max<int64_t>(1, static_cast<int64_t>(fit));
}

// Records what a growing operator produced per input row: the estimate rises at once and
// decays slowly (an estimate: concurrent updates may race harmlessly).
void PipelineRun::Observe(size_t seg, double bytes_per_row) {
  auto& estimate = sizing_[seg]->bytes_per_row;
  estimate.store(std::max(bytes_per_row, estimate.load() * 0.9));
}

}  // namespace ketch::exec
