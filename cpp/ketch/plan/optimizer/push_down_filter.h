#pragma once

#include "ketch/plan/optimizer/rule.h"

namespace ketch {

/// Moves filters towards the source: merges adjacent filters; pushes a filter below a projection
/// (columns it reads are replaced by their expressions there, when those are plain columns or
/// cheap expressions: no UDF, download or image kernel is run twice), so a filter on columns a
/// UDF does not produce passes below the UDF; below a sort; into each side of a join (inner: both,
/// left/semi/anti: the left side); and into a file scan (the scan evaluates it on each batch it
/// decodes, and the last optimizer rule prunes row groups and partitions with it). Filters that
/// call UDFs stay where they are; a filter never passes below a limit pushed into a scan.
class PushDownFilter : public OptimizerRule {
 public:
  std::string name() const override { return "PushDownFilter"; }
  arrow::Result<Transformed> Apply(const LogicalPlanPtr& plan) const override;
};

}  // namespace ketch
