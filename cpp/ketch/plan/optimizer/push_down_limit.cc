#include "ketch/plan/optimizer/push_down_limit.h"

namespace ketch {
namespace {

arrow::Result<Transformed> PushOnce(const LogicalPlanPtr& plan) {
  if (plan->kind() != LogicalKind::kLimit) return Transformed{plan, false};
  const auto& input = plan->inputs()[0];
  const int64_t n = plan->limit();
  switch (input->kind()) {
    case LogicalKind::kProject: {
      ARROW_ASSIGN_OR_RAISE(auto limit, LogicalPlan::Limit(input->inputs()[0], n));
      ARROW_ASSIGN_OR_RAISE(auto project, input->WithInputs({limit}));
      return Transformed{project, true};
    }
    case LogicalKind::kLimit: {
      ARROW_ASSIGN_OR_RAISE(auto limit, LogicalPlan::Limit(input->inputs()[0], std::min(n, input->limit())));
      return Transformed{limit, true};
    }
    case LogicalKind::kScan: {
      const int64_t current = input->scan().limit;
      if (current >= 0 && current <= n) return Transformed{plan, false};
      ScanInfo info = input->scan();
      info.limit = n;
      ARROW_ASSIGN_OR_RAISE(auto scan, LogicalPlan::Scan(std::move(info)));
      ARROW_ASSIGN_OR_RAISE(auto limit, LogicalPlan::Limit(scan, n));
      return Transformed{limit, true};
    }
    default:
      return Transformed{plan, false};
  }
}

}  // namespace

arrow::Result<Transformed> PushDownLimit::Apply(const LogicalPlanPtr& plan) const {
  return RewriteTopDown(plan, PushOnce);
}

}  // namespace ketch
