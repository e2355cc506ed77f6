#include "ketch/plan/optimizer/drop_repartitions.h"

namespace ketch {
namespace {

bool Regroups(LogicalKind kind) {
  return kind == LogicalKind::kSort || kind == LogicalKind::kAggregate || kind == LogicalKind::kRepartition ||
         kind == LogicalKind::kWindow;
}

bool IsPartitioning(LogicalKind kind) {
  return kind == LogicalKind::kRepartition || kind == LogicalKind::kIntoBatches ||
         kind == LogicalKind::kIntoPartitions;
}

arrow::Result<Transformed> DropOnce(const LogicalPlanPtr& plan) {
  if (plan->inputs().size() != 1) return Transformed{plan, false};
  const LogicalPlanPtr& input = plan->inputs()[0];
  const bool drop = (Regroups(plan->kind()) && IsPartitioning(input->kind())) ||
                    (plan->kind() == LogicalKind::kIntoBatches && input->kind() == LogicalKind::kIntoBatches);
  if (!drop) return Transformed{plan, false};
  if (plan->kind() == LogicalKind::kRepartition && plan->partitioning().num_partitions < 0) {
    // repartition(None) keeps its input's count: it takes the dropped node's.
    const auto count = NumPartitions(*input);
    if (!count.exact) return Transformed{plan, false};
    PartitionSpec spec = plan->partitioning();
    spec.num_partitions = count.count;
    ARROW_ASSIGN_OR_RAISE(auto rebuilt, LogicalPlan::Repartition(input->inputs()[0], std::move(spec)));
    return Transformed{rebuilt, true};
  }
  ARROW_ASSIGN_OR_RAISE(auto rebuilt, plan->WithInputs({input->inputs()[0]}));
  return Transformed{rebuilt, true};
}

}  // namespace

arrow::Result<Transformed> DropRepartitions::Apply(const LogicalPlanPtr& plan) const {
  return RewriteTopDown(plan, DropOnce);
}

}  // namespace ketch
