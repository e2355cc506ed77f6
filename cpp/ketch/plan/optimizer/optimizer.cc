#include "ketch/plan/optimizer/optimizer.h"

#include "ketch/plan/optimizer/push_down_filter.h"
#include "ketch/plan/optimizer/push_down_projection.h"
#include "ketch/plan/optimizer/split_udf_projections.h"

namespace ketch {

Optimizer::Optimizer(std::set<std::string> disabled, int max_passes)
    : disabled_(std::move(disabled)), max_passes_(max_passes) {
  rules_.push_back(std::make_unique<PushDownFilter>());
  rules_.push_back(std::make_unique<PushDownProjection>());
}

arrow::Result<LogicalPlanPtr> Optimizer::Optimize(const LogicalPlanPtr& plan) const {
  LogicalPlanPtr current = plan;
  for (int pass = 0; pass < max_passes_; ++pass) {
    bool changed = false;
    for (const auto& rule : rules_) {
      if (disabled_.count(rule->name())) continue;
      ARROW_ASSIGN_OR_RAISE(auto result, rule->Apply(current));
      changed |= result.changed;
      current = result.plan;
    }
    if (!changed) break;
  }
  // After the pushdowns settled: UDFs and async I/O functions get projection nodes of their own.
  const SplitUdfProjections split;
  if (!disabled_.count(split.name())) {
    ARROW_ASSIGN_OR_RAISE(auto result, split.Apply(current));
    current = result.plan;
  }
  return current;
}

}  // namespace ketch
