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

bool IsIoCall(const Expr& expr) {
  return expr.kind() == ExprKind::kCall && expr.name().rfind("url_", 0) == 0;
}

// Replaces every I/O call nested inside a larger expression (`image_decode(url_download(u))`) by a
// column `__ketch_io_<n>` computed by `extracted`, so the download runs on the I/O pool as a stage
// of its own and the kernels above it on the compute pool (Daft's SplitGranularProjection).
ExprPtr ExtractNestedIo(const ExprPtr& expr, bool root, std::set<std::string>* temps,
                        const std::set<std::string>& input_names, std::vector<ExprPtr>* extracted) {
  if (IsIoCall(*expr) && !root) {
    std::string name;
    for (size_t n = temps->size(); name.empty() || input_names.count(name); ++n) {
      name = "__ketch_io_" + std::to_string(n);
    }
    temps->insert(name);
    extracted->push_back(Expr::Alias(expr, name));
    return Expr::Column(name);
  }
  if (expr->kind() == ExprKind::kColumn || expr->kind() == ExprKind::kLiteral ||
      expr->kind() == ExprKind::kUdf) {
    return expr;  // a UDF's arguments are evaluated on its own workers anyway
  }
  const bool child_is_root = root && expr->kind() == ExprKind::kAlias;
  std::vector<ExprPtr> children;
  bool changed = false;
  for (const auto& child : expr->children()) {
    children.push_back(ExtractNestedIo(child, child_is_root, temps, input_names, extracted));
    changed |= children.back() != child;
  }
  if (!changed) return expr;
  switch (expr->kind()) {
    case ExprKind::kAlias:
      return Expr::Alias(children[0], expr->name());
    case ExprKind::kCast:
      return Expr::Cast(children[0], expr->type());
    default:
      return Expr::Call(expr->name(), std::move(children), expr->options());
  }
}

arrow::Result<Transformed> SplitOne(const LogicalPlanPtr& plan) {
  const auto& exprs = plan->exprs();
  std::vector<ExprPtr> plain;
  std::vector<std::vector<ExprPtr>> stages;  // one per UDF expression, one for all I/O ones
  std::vector<ExprPtr> io;
  std::vector<ExprPtr> above_io;  // kernels over nested I/O calls, run after the I/O stage
  std::set<std::string> input_names, temps;
  for (const auto& field : plan->inputs()[0]->schema()->fields()) input_names.insert(field->name());
  int computed_plain = 0;
  for (const auto& expr : exprs) {
    if (expr->HasUdf()) {
      stages.push_back({expr});
    } else if (HasIoCall(*expr)) {
      ExprPtr rest = ExtractNestedIo(expr, /*root=*/true, &temps, input_names, &io);
      (rest == expr ? io : above_io).push_back(rest);
    } else {
      plain.push_back(expr);
      if (!IsPassThrough(*expr)) ++computed_plain;
    }
  }
  if (!above_io.empty()) stages.insert(stages.begin(), above_io);
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
        if (written.count(name) && !temps.count(name)) return Transformed{plan, false};
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
