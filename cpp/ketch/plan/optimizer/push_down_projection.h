#pragma once

#include "ketch/plan/optimizer/rule.h"

namespace ketch {

/// Column pruning: computes the columns each node's consumers need, drops projection expressions
/// nobody reads, removes projections that only repeat their input, and narrows Parquet scans to the
/// needed columns (the scan reads its pushed filter's columns on its own and drops them after).
class PushDownProjection : public OptimizerRule {
 public:
  std::string name() const override { return "PushDownProjection"; }
  arrow::Result<Transformed> Apply(const LogicalPlanPtr& plan) const override;
};

}  // namespace ketch
