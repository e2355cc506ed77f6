#pragma once

#include "ketch/plan/optimizer/rule.h"

namespace ketch {

/// Drops projections that return their input unchanged (same columns, same order, no renames) and
/// merges a projection into the projection below it when every expression of the lower one is a
/// plain column, or is used at most once above and calls no Python UDF (so no work is repeated;
/// UDF projections stay separate, they are split out again after the pushdowns anyway).
class MergeProjections : public OptimizerRule {
 public:
  std::string name() const override { return "MergeProjections"; }
  arrow::Result<Transformed> Apply(const LogicalPlanPtr& plan) const override;
};

}  // namespace ketch
