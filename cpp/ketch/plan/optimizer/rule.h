#pragma once

#include <arrow/result.h>

#include <functional>
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

/// Applies `rewrite` to `plan`, then (recursively) to the inputs of what it returned: the
/// top-down traversal of rules that move a node toward the sources (a filter or limit keeps
/// travelling down as far as it can in one pass).
arrow::Result<Transformed> RewriteTopDown(
    const LogicalPlanPtr& plan,
    const std::function<arrow::Result<Transformed>(const LogicalPlanPtr&)>& rewrite);

}  // namespace ketch
