#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ketch/plan/optimizer/materialize_scan_tasks.h"
#include "ketch/plan/optimizer/rule.h"

namespace ketch {

/// Runs the rule batches of the logical optimizer (each rule is switchable by name in `disabled`):
///  1. "simplify" once: SimplifyExpressions (constant folding, Boolean simplification).
///  2. "pushdown" to a fixpoint (at most `max_passes` passes): PushDownFilter, PushDownProjection,
///     PushDownLimit, MergeProjections, SimplifyExpressions.
///  3. "nearest" once: PushDownNearest (a top-k by vector distance over a Lance scan with a
///     matching vector index becomes Lance's nearest-neighbour search; after the filters settled).
///  4. "split" once: SplitUdfProjections (UDFs and async I/O functions get projections of their own),
///     then PushDownProjection once more (the stages pass through only what is read above them).
///  5. "scan tasks" once, last: MaterializeScanTasks (partition and row-group pruning, task sizing).
class Optimizer {
 public:
  explicit Optimizer(std::set<std::string> disabled = {}, int max_passes = 10, ScanTaskSizing sizing = {});
  arrow::Result<LogicalPlanPtr> Optimize(const LogicalPlanPtr& plan) const;

 private:
  arrow::Result<LogicalPlanPtr> RunOnce(const OptimizerRule& rule, const LogicalPlanPtr& plan) const;

  std::vector<std::unique_ptr<OptimizerRule>> pushdown_rules_;
  std::unique_ptr<OptimizerRule> simplify_;
  std::unique_ptr<OptimizerRule> nearest_;
  std::unique_ptr<OptimizerRule> split_;
  std::unique_ptr<OptimizerRule> prune_after_split_;
  std::unique_ptr<OptimizerRule> scan_tasks_;
  std::set<std::string> disabled_;
  int max_passes_;
};

}  // namespace ketch
