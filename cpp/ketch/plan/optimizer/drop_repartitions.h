#pragma once

#include "ketch/plan/optimizer/rule.h"

namespace ketch {

/// Drops repartition / into_batches / into_partitions nodes whose effect nothing can observe
/// (Daft's DropRepartition and DropIntoBatches):
/// - directly under a sort, an aggregation or another repartition, which regroup every row
///   anyway (a repartition(None) above takes the dropped one's partition count);
/// - an into_batches directly under another into_batches (the outer batches win).
/// A node with a UDF, a writer or the result between it and the regrouping node is kept: UDFs see
/// batches, writers write a file per partition, and the result keeps its partitions.
class DropRepartitions : public OptimizerRule {
 public:
  std::string name() const override { return "DropRepartitions"; }
  arrow::Result<Transformed> Apply(const LogicalPlanPtr& plan) const override;
};

}  // namespace ketch
