#pragma once

#include "ketch/plan/optimizer/rule.h"

namespace ketch {

/// Moves filters towards the source: merges adjacent filters, pushes a filter below a projection
/// when the columns it reads are plain (possibly renamed) columns there, and into a Parquet scan
/// (the scan evaluates it on each batch it reads). Filters that call UDFs stay where they are.
class PushDownFilter : public OptimizerRule {
 public:
  std::string name() const override { return "PushDownFilter"; }
  arrow::Result<Transformed> Apply(const LogicalPlanPtr& plan) const override;
};

}  // namespace ketch
