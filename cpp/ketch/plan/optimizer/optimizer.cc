#include "ketch/plan/optimizer/optimizer.h"

#include "ketch/plan/optimizer/drop_repartitions.h"
#include "ketch/plan/optimizer/merge_projections.h"
#include "ketch/plan/optimizer/push_down_filter.h"
#include "ketch/plan/optimizer/push_down_limit.h"
#include "ketch/plan/optimizer/push_down_nearest.h"
#include "ketch/plan/optimizer/push_down_projection.h"
#include "ketch/plan/optimizer/simplify_expressions.h"
#include "ketch/plan/optimizer/split_udf_projections.h"

namespace ketch {

Optimizer::Optimizer(std::set<std::string> disabled, int max_passes, ScanTaskSizing sizing)
    : disabled_(std::move(disabled)), max_passes_(max_passes) {
  simplify_ = std::make_unique<SimplifyExpressions>();
  pushdown_rules_.push_back(std::make_unique<PushDownFilter>());
  pushdown_rules_.push_back(std::make_unique<PushDownProjection>());
  pushdown_rules_.push_back(std::make_unique<PushDownLimit>());
  pushdown_rules_.push_back(std::make_unique<MergeProjections>());
  pushdown_rules_.push_back(std::make_unique<SimplifyExpressions>());
  pushdown_rules_.push_back(std::make_unique<DropRepartitions>());
  nearest_ = std::make_unique<PushDownNearest>();
  split_ = std::make_unique<SplitUdfProjections>();
  prune_after_split_ = std::make_unique<PushDownProjection>();
  scan_tasks_ = std::make_unique<MaterializeScanTasks>(sizing);
}

arrow::Result<LogicalPlanPtr> Optimizer::RunOnce(const OptimizerRule& rule,
                                                 const LogicalPlanPtr& plan) const {
  if (disabled_.count(rule.name())) return plan;
  ARROW_ASSIGN_OR_RAISE(auto result, rule.Apply(plan));
  return result.plan;
}

arrow::Result<LogicalPlanPtr> Optimizer::Optimize(const LogicalPlanPtr& plan) const {
  ARROW_ASSIGN_OR_RAISE(LogicalPlanPtr current, RunOnce(*simplify_, plan));
  for (int pass = 0; pass < max_passes_; ++pass) {
    bool changed = false;
    for (const auto& rule : pushdown_rules_) {
      if (disabled_.count(rule->name())) continue;
      ARROW_ASSIGN_OR_RAISE(auto result, rule->Apply(current));
      changed |= result.changed;
      current = result.plan;
    }
    if (!changed) break;
  }
  // A top-k by vector distance sees the scan with every filter pushed into it.
  ARROW_ASSIGN_OR_RAISE(current, RunOnce(*nearest_, current));
  // After the pushdowns settled: UDFs and async I/O functions get projection nodes of their own,
  // then scans become scan tasks (they must see every pushed filter, column and limit).
  ARROW_ASSIGN_OR_RAISE(current, RunOnce(*split_, current));
  // The split stages pass every column through; prune those no stage above reads.
  ARROW_ASSIGN_OR_RAISE(current, RunOnce(*prune_after_split_, current));
  return RunOnce(*scan_tasks_, current);
}

}  // namespace ketch
