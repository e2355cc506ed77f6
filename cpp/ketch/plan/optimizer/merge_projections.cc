#include "ketch/plan/optimizer/merge_projections.h"

#include <map>

#include "ketch/expr/expr_analysis.h"

namespace ketch {
namespace {

bool IsIdentity(const LogicalPlan& project) {
  const auto& input_schema = *project.inputs()[0]->schema();
  if (static_cast<int>(project.exprs().size()) != input_schema.num_fields()) return false;
  for (size_t i = 0; i < project.exprs().size(); ++i) {
    const auto& e = project.exprs()[i];
    if (e->kind() != ExprKind::kColumn || e->name() != input_schema.field(static_cast<int>(i))->name())
      return false;
  }
  return true;
}

void CountUses(const Expr& e, std::map<std::string, int>* uses) {
  if (e.kind() == ExprKind::kColumn) (*uses)[e.name()]++;
  for (const auto& c : e.children()) CountUses(*c, uses);
}

// Merged expressions deeper than this stay in separate projections.
constexpr int32_t kMaxMergedExprDepth = 256;

// The expression without its alias (the name it gives is decided by the outer projection).
ExprPtr Unaliased(const ExprPtr& e) { return e->kind() == ExprKind::kAlias ? e->children()[0] : e; }

arrow::Result<Transformed> MergeOnce(const LogicalPlanPtr& plan) {
  if (plan->kind() != LogicalKind::kProject) return Transformed{plan, false};
  if (IsIdentity(*plan)) return Transformed{plan->inputs()[0], true};
  const auto& lower = plan->inputs()[0];
  if (lower->kind() != LogicalKind::kProject) return Transformed{plan, false};
  std::map<std::string, int> uses;
  for (const auto& e : plan->exprs()) CountUses(*e, &uses);
  std::map<std::string, ExprPtr> mapping;
  for (const auto& e : lower->exprs()) {
    const auto inner = Unaliased(e);
    const bool plain = inner->kind() == ExprKind::kColumn;
    if (!plain && (e->HasUdf() || uses[e->OutputName()] > 1)) return Transformed{plan, false};
    mapping[e->OutputName()] = inner;
  }
  std::vector<ExprPtr> merged;
  for (const auto& e : plan->exprs()) {
    auto substituted = SubstituteColumns(e, mapping);
    // Merging thousands of projections would build expressions as deep as the plan was: keep
    // them apart past a modest depth (the recursive expression walks stay cheap).
    if (substituted->depth() > kMaxMergedExprDepth) return Transformed{plan, false};
    if (substituted->OutputName() != e->OutputName()) substituted = Expr::Alias(substituted, e->OutputName());
    merged.push_back(std::move(substituted));
  }
  ARROW_ASSIGN_OR_RAISE(auto project, LogicalPlan::Project(lower->inputs()[0], std::move(merged)));
  return Transformed{project, true};
}

}  // namespace

arrow::Result<Transformed> MergeProjections::Apply(const LogicalPlanPtr& plan) const {
  return RewriteTopDown(plan, MergeOnce);
}

}  // namespace ketch
