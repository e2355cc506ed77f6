#pragma once

#include "ketch/plan/optimizer/rule.h"

namespace ketch {

/// Moves limits toward the source: `Limit(Project(x))` → `Project(Limit(x))` (projections map rows
/// one to one, so UDFs and downloads then run on `n` rows only), `Limit(a, Limit(b, x))` →
/// `Limit(min(a, b), x)`, and a limit directly above a file scan is pushed into it (the scan stops
/// reading once `n` rows passed its filter; the Limit node stays to cut the last batch).
class PushDownLimit : public OptimizerRule {
 public:
  std::string name() const override { return "PushDownLimit"; }
  arrow::Result<Transformed> Apply(const LogicalPlanPtr& plan) const override;
};

}  // namespace ketch
