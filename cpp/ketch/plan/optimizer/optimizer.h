#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ketch/plan/optimizer/rule.h"

namespace ketch {

/// Runs rule batches to a fixpoint (at most `max_passes` passes over the rules).
/// Default rules, in order: PushDownFilter, PushDownProjection. Rules named in `disabled` are skipped.
class Optimizer {
 public:
  explicit Optimizer(std::set<std::string> disabled = {}, int max_passes = 10);
  arrow::Result<LogicalPlanPtr> Optimize(const LogicalPlanPtr& plan) const;

 private:
  std::vector<std::unique_ptr<OptimizerRule>> rules_;
  std::set<std::string> disabled_;
  int max_passes_;
};

}  // namespace ketch
