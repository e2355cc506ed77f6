#pragma once

#include <arrow/result.h>

#include <string>

#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// Result of a rewrite: the plan and whether the rule changed it (DataFusion's Transformed<T>).
struct Transformed {
  LogicalPlanPtr plan;
  bool changed = false;
};

/// One optimizer rule: a named, switchable rewrite of a logical plan.
class OptimizerRule {
 public:
  virtual ~OptimizerRule() = default;
  virtual std::string name() const = 0;
  virtual arrow::Result<Transformed> Apply(const LogicalPlanPtr& plan) const = 0;
};

}  // namespace ketch
