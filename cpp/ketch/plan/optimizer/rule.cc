#include "ketch/plan/optimizer/rule.h"

namespace ketch {

arrow::Result<Transformed> RewriteTopDown(
    const LogicalPlanPtr& plan,
    const std::function<arrow::Result<Transformed>(const LogicalPlanPtr&)>& rewrite) {
  ARROW_ASSIGN_OR_RAISE(auto self, rewrite(plan));
  std::vector<LogicalPlanPtr> inputs;
  bool inputs_changed = false;
  for (const auto& input : self.plan->inputs()) {
    ARROW_ASSIGN_OR_RAISE(auto child, RewriteTopDown(input, rewrite));
    inputs_changed |= child.changed;
    inputs.push_back(child.plan);
  }
  if (!inputs_changed) return self;
  ARROW_ASSIGN_OR_RAISE(auto rebuilt, self.plan->WithInputs(std::move(inputs)));
  return Transformed{rebuilt, true};
}

}  // namespace ketch
