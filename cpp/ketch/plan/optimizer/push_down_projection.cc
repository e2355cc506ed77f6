#include "ketch/plan/optimizer/push_down_projection.h"

#include <optional>
#include <set>

namespace ketch {
namespace {

using Required = std::optional<std::set<std::string>>;  // nullopt = every column

bool IsIdentityProjection(const LogicalPlan& project) {
  const auto& input_schema = *project.inputs()[0]->schema();
  if (static_cast<int>(project.exprs().size()) != input_schema.num_fields()) return false;
  for (size_t i = 0; i < project.exprs().size(); ++i) {
    const auto& e = project.exprs()[i];
    if (e->kind() != ExprKind::kColumn || e->name() != input_schema.field(static_cast<int>(i))->name()) {
      return false;
    }
  }
  return true;
}

arrow::Result<Transformed> Prune(const LogicalPlanPtr& plan, const Required& required);

arrow::Result<Transformed> RebuildWithChild(const LogicalPlanPtr& plan, const Required& child_required,
                                            bool changed) {
  ARROW_ASSIGN_OR_RAISE(auto child, Prune(plan->inputs()[0], child_required));
  if (!child.changed) return Transformed{plan, changed};
  ARROW_ASSIGN_OR_RAISE(auto rebuilt, plan->WithInputs({child.plan}));
  return Transformed{rebuilt, true};
}

arrow::Result<Transformed> Prune(const LogicalPlanPtr& plan, const Required& required) {
  switch (plan->kind()) {
    case LogicalKind::kProject: {
      std::vector<ExprPtr> kept;
      for (const auto& expr : plan->exprs()) {
        if (!required || required->count(expr->OutputName())) kept.push_back(expr);
      }
      bool changed = kept.size() != plan->exprs().size();
      LogicalPlanPtr node = plan;
      if (changed) {
        ARROW_ASSIGN_OR_RAISE(node, LogicalPlan::Project(plan->inputs()[0], kept));
      }
      std::set<std::string> child_required;
      for (const auto& expr : kept) expr->CollectColumns(&child_required);
      ARROW_ASSIGN_OR_RAISE(auto result, RebuildWithChild(node, child_required, changed));
      if (IsIdentityProjection(*result.plan)) return Transformed{result.plan->inputs()[0], true};
      return result;
    }
    case LogicalKind::kFilter: {
      Required child_required = required;
      if (child_required) plan->predicate()->CollectColumns(&*child_required);
      return RebuildWithChild(plan, child_required, false);
    }
    case LogicalKind::kLimit:
      return RebuildWithChild(plan, required, false);
    case LogicalKind::kWriteParquet:
      return RebuildWithChild(plan, std::nullopt, false);
    case LogicalKind::kParquetScan: {
      if (!required) return Transformed{plan, false};
      std::vector<std::string> columns;
      for (const auto& field : plan->scan().file_schema->fields()) {
        if (required->count(field->name())) columns.push_back(field->name());
      }
      if (plan->scan().columns && *plan->scan().columns == columns) return Transformed{plan, false};
      ParquetScanInfo info = plan->scan();
      info.columns = std::move(columns);
      ARROW_ASSIGN_OR_RAISE(auto scan, LogicalPlan::ParquetScan(std::move(info)));
      return Transformed{scan, true};
    }
    case LogicalKind::kInMemorySource:
      return Transformed{plan, false};
  }
  return Transformed{plan, false};
}

}  // namespace

arrow::Result<Transformed> PushDownProjection::Apply(const LogicalPlanPtr& plan) const {
  return Prune(plan, std::nullopt);
}

}  // namespace ketch
