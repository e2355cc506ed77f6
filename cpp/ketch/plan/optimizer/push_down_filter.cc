#include "ketch/plan/optimizer/push_down_filter.h"

#include <map>

namespace ketch {
namespace {

// Replaces col(name) by the projection's input expression for that name.
ExprPtr Substitute(const ExprPtr& expr, const std::map<std::string, ExprPtr>& mapping) {
  if (expr->kind() == ExprKind::kColumn) {
    auto it = mapping.find(expr->name());
    return it == mapping.end() ? expr : it->second;
  }
  std::vector<ExprPtr> children;
  for (const auto& child : expr->children()) children.push_back(Substitute(child, mapping));
  return expr->WithChildren(std::move(children));
}

// col(x) or col(x) as y → col(x); anything else → nullptr (not worth duplicating below the projection).
ExprPtr PlainColumn(const ExprPtr& expr) {
  if (expr->kind() == ExprKind::kColumn) return expr;
  if (expr->kind() == ExprKind::kAlias && expr->children()[0]->kind() == ExprKind::kColumn) {
    return expr->children()[0];
  }
  return nullptr;
}

ExprPtr And(ExprPtr a, ExprPtr b) { return Expr::Call("and_kleene", {std::move(a), std::move(b)}); }

arrow::Result<Transformed> PushOnce(const LogicalPlanPtr& plan) {
  if (plan->kind() != LogicalKind::kFilter || plan->predicate()->HasUdf()) return Transformed{plan, false};
  const auto& input = plan->inputs()[0];
  const auto& predicate = plan->predicate();
  switch (input->kind()) {
    case LogicalKind::kFilter: {
      ARROW_ASSIGN_OR_RAISE(auto merged,
                            LogicalPlan::Filter(input->inputs()[0], And(input->predicate(), predicate)));
      return Transformed{merged, true};
    }
    case LogicalKind::kProject: {
      std::set<std::string> used;
      predicate->CollectColumns(&used);
      std::map<std::string, ExprPtr> mapping;
      for (const auto& expr : input->exprs()) {
        if (!used.count(expr->OutputName())) continue;
        auto column = PlainColumn(expr);
        if (!column) return Transformed{plan, false};
        mapping[expr->OutputName()] = column;
      }
      ARROW_ASSIGN_OR_RAISE(auto filter,
                            LogicalPlan::Filter(input->inputs()[0], Substitute(predicate, mapping)));
      ARROW_ASSIGN_OR_RAISE(auto project, LogicalPlan::Project(filter, input->exprs()));
      return Transformed{project, true};
    }
    case LogicalKind::kParquetScan: {
      ParquetScanInfo info = input->scan();
      info.filter = info.filter ? And(info.filter, predicate) : predicate;
      ARROW_ASSIGN_OR_RAISE(auto scan, LogicalPlan::ParquetScan(std::move(info)));
      return Transformed{scan, true};
    }
    default:
      return Transformed{plan, false};
  }
}

}  // namespace

arrow::Result<Transformed> PushDownFilter::Apply(const LogicalPlanPtr& plan) const {
  // Rewrite this node first, then its (possibly new) inputs, so a filter travels as far as it can.
  ARROW_ASSIGN_OR_RAISE(auto self, PushOnce(plan));
  bool changed = self.changed;
  std::vector<LogicalPlanPtr> inputs;
  bool inputs_changed = false;
  for (const auto& input : self.plan->inputs()) {
    ARROW_ASSIGN_OR_RAISE(auto child, Apply(input));
    inputs_changed |= child.changed;
    inputs.push_back(child.plan);
  }
  if (!inputs_changed) return Transformed{self.plan, changed};
  ARROW_ASSIGN_OR_RAISE(auto rebuilt, self.plan->WithInputs(std::move(inputs)));
  return Transformed{rebuilt, true};
}

}  // namespace ketch
