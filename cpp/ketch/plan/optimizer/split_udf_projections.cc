#include "ketch/plan/optimizer/split_udf_projections.h"

#include <set>

namespace ketch {
namespace {

bool HasIoCall(const Expr& expr) {
  if (expr.kind() == ExprKind::kCall && expr.name().rfind("url_", 0) == 0) return true;
  for (const auto& child : expr.children()) {
    if (HasIoCall(*child)) return true;
  }
  return false;
}

bool IsPassThrough(const Expr& expr) {
  return expr.kind() == ExprKind::kColumn ||
         (expr.kind() == ExprKind::kAlias && expr.children()[0]->kind() == ExprKind::kColumn &&
          expr.children()[0]->name() == expr.name());
}

std::set<std::string> Reads(const Expr& expr) {
  std::set<std::string> out;
  expr.CollectColumns(&out);
  return out;
}

arrow::Result<Transformed> SplitOne(const LogicalPlanPtr& plan) {
  const auto& exprs = plan->exprs();
  std::vector<ExprPtr> plain;
  std::vector<std::vector<ExprPtr>> stages;  // one per UDF expression, one for all I/O ones
  std::vector<ExprPtr> io;
  int computed_plain = 0;
  for (const auto& expr : exprs) {
    if (expr->HasUdf()) {
      stages.push_back({expr});
    } else if (HasIoCall(*expr)) {
      io.push_back(expr);
    } else {
      plain.push_back(expr);
      if (!IsPassThrough(*expr)) ++computed_plain;
    }
  }
  if (!io.empty()) stages.insert(stages.begin(), io);
  // Already alone: one special stage next to pass-through columns only.
  if (stages.empty() || (stages.size() == 1 && computed_plain == 0)) return Transformed{plan, false};
  // Every stage reads the projection's input: no earlier stage may replace a column it reads.
  std::set<std::string> written;
  for (const auto& expr : plain) {
    if (!IsPassThrough(*expr)) written.insert(expr->OutputName());
  }
  for (const auto& stage : stages) {
    for (const auto& expr : stage) {
      for (const auto& name : Reads(*expr)) {
        if (written.count(name)) return Transformed{plan, false};
      }
    }
    for (const auto& expr : stage) written.insert(expr->OutputName());
  }
  const auto& input = plan->inputs()[0];
  // Stage 0: the plain expressions, and every input column they do not replace.
  std::vector<ExprPtr> first = plain;
  std::set<std::string> names;
  for (const auto& expr : plain) names.insert(expr->OutputName());
  for (const auto& field : input->schema()->fields()) {
    if (!names.count(field->name())) {
      first.push_back(Expr::Column(field->name()));
      names.insert(field->name());
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto current, LogicalPlan::Project(input, first));
  for (const auto& stage : stages) {
    std::set<std::string> outputs;
    for (const auto& expr : stage) outputs.insert(expr->OutputName());
    std::vector<ExprPtr> next;
    for (const auto& field : current->schema()->fields()) {
      if (!outputs.count(field->name())) next.push_back(Expr::Column(field->name()));
    }
    next.insert(next.end(), stage.begin(), stage.end());
    ARROW_ASSIGN_OR_RAISE(current, LogicalPlan::Project(current, next));
  }
  std::vector<ExprPtr> last;
  for (const auto& expr : exprs) last.push_back(Expr::Column(expr->OutputName()));
  ARROW_ASSIGN_OR_RAISE(current, LogicalPlan::Project(current, last));
  return Transformed{current, true};
}

}  // namespace

arrow::Result<Transformed> SplitUdfProjections::Apply(const LogicalPlanPtr& plan) const {
  bool changed = false;
  std::vector<LogicalPlanPtr> inputs;
  for (const auto& input : plan->inputs()) {
    ARROW_ASSIGN_OR_RAISE(auto result, Apply(input));
    changed |= result.changed;
    inputs.push_back(result.plan);
  }
  LogicalPlanPtr current = plan;
  if (changed) {
    ARROW_ASSIGN_OR_RAISE(current, plan->WithInputs(inputs));
  }
  if (current->kind() != LogicalKind::kProject) return Transformed{current, changed};
  ARROW_ASSIGN_OR_RAISE(auto split, SplitOne(current));
  return Transformed{split.plan, changed || split.changed};
}

}  // namespace ketch
