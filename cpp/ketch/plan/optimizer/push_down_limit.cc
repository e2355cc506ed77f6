#include "ketch/plan/optimizer/push_down_limit.h"

#include <arrow/compute/api.h>

#include <algorithm>

namespace ketch {
namespace {

// `gen(x) as g` with the generator UDF taking at most `n` items per row (unchanged if it already
// takes no more).
ExprPtr CapGenerator(const ExprPtr& expr, int64_t n) {
  if (expr->kind() == ExprKind::kAlias) {
    ExprPtr inner = CapGenerator(expr->children()[0], n);
    return inner == expr->children()[0] ? expr : Expr::Alias(inner, expr->name());
  }
  if (expr->kind() != ExprKind::kUdf || !expr->udf_properties().generator) return expr;
  const int64_t current = expr->udf_properties().max_items_per_row;
  if (current >= 0 && current <= n) return expr;
  UdfProperties properties = expr->udf_properties();
  properties.max_items_per_row = n;
  return Expr::Udf(expr->udf(), expr->children(), expr->type(), std::move(properties));
}

// Limit(n, Explode(Project(gen(x) as g, ...))): the first n output rows come from the first input
// rows, and none of those rows contributes more than n items, so each row's generator is asked for
// n items at most (an endless generator under `limit(5)` stops). The limit stays above the explode.
// `list_value_length(col(c)) > 0`: the filter the DataFrame puts below a generator's explode (a row
// that yields nothing is dropped); capping items at n >= 1 keeps its verdict.
bool IsNonEmptyCheck(const Expr& predicate, const std::vector<std::string>& exploded) {
  if (predicate.kind() != ExprKind::kCall || predicate.name() != "greater") return false;
  const auto& length = predicate.children()[0];
  const auto& zero = predicate.children()[1];
  if (length->kind() != ExprKind::kCall || length->name() != "list_value_length") return false;
  const auto& column = length->children()[0];
  if (column->kind() != ExprKind::kColumn ||
      std::find(exploded.begin(), exploded.end(), column->name()) == exploded.end()) {
    return false;
  }
  if (zero->kind() != ExprKind::kLiteral || !zero->literal()->is_valid) return false;
  auto value = arrow::compute::Cast(arrow::Datum(zero->literal()), arrow::int64());
  return value.ok() && value->scalar_as<arrow::Int64Scalar>().value == 0;
}

arrow::Result<Transformed> CapGeneratorsUnderLimit(const LogicalPlanPtr& plan, const LogicalPlanPtr& explode,
                                                   int64_t n) {
  if (n < 1) return Transformed{plan, false};
  const auto& exploded = explode->explode_columns();
  // Filters between the explode and the projection may only drop rows whose lists are empty.
  std::vector<LogicalPlanPtr> filters;
  LogicalPlanPtr project = explode->inputs()[0];
  while (project->kind() == LogicalKind::kFilter && IsNonEmptyCheck(*project->predicate(), exploded)) {
    filters.push_back(project);
    project = project->inputs()[0];
  }
  if (project->kind() != LogicalKind::kProject) return Transformed{plan, false};
  std::vector<ExprPtr> exprs;
  bool changed = false;
  for (const auto& expr : project->exprs()) {
    const bool is_exploded =
        std::find(exploded.begin(), exploded.end(), expr->OutputName()) != exploded.end();
    exprs.push_back(is_exploded ? CapGenerator(expr, n) : expr);
    changed |= exprs.back() != expr;
  }
  if (!changed) return Transformed{plan, false};
  ARROW_ASSIGN_OR_RAISE(LogicalPlanPtr capped, LogicalPlan::Project(project->inputs()[0], std::move(exprs)));
  for (auto it = filters.rbegin(); it != filters.rend(); ++it) {
    ARROW_ASSIGN_OR_RAISE(capped, (*it)->WithInputs({capped}));
  }
  ARROW_ASSIGN_OR_RAISE(auto new_explode, explode->WithInputs({capped}));
  ARROW_ASSIGN_OR_RAISE(auto limit, plan->WithInputs({new_explode}));
  return Transformed{limit, true};
}

arrow::Result<Transformed> PushOnce(const LogicalPlanPtr& plan) {
  if (plan->kind() != LogicalKind::kLimit) return Transformed{plan, false};
  const auto& input = plan->inputs()[0];
  const int64_t n = plan->limit();
  const int64_t offset = plan->offset();
  // Rows the input must produce for this limit: its offset's and its own.
  const int64_t end = plan->limit_end();
  switch (input->kind()) {
    case LogicalKind::kProject: {
      ARROW_ASSIGN_OR_RAISE(auto limit, LogicalPlan::Limit(input->inputs()[0], n, offset));
      ARROW_ASSIGN_OR_RAISE(auto project, input->WithInputs({limit}));
      return Transformed{project, true};
    }
    case LogicalKind::kLimit: {
      // Rows [o2, o2 + n2) of the inner limit's rows [o1, o1 + n1): rows [o1 + o2, ...) of its
      // input, min(n2, n1 - o2) of them.
      const int64_t inner_n = input->limit();
      const int64_t inner_offset = input->offset();
      const int64_t merged_n = std::max<int64_t>(
          0, std::min(n, inner_n == LogicalPlan::kNoLimit ? LogicalPlan::kNoLimit : inner_n - offset));
      const int64_t merged_offset =
          inner_offset > LogicalPlan::kNoLimit - offset ? LogicalPlan::kNoLimit : inner_offset + offset;
      ARROW_ASSIGN_OR_RAISE(auto limit, LogicalPlan::Limit(input->inputs()[0], merged_n, merged_offset));
      return Transformed{limit, true};
    }
    case LogicalKind::kScan: {
      if (end == LogicalPlan::kNoLimit) return Transformed{plan, false};  // offset alone: reads all
      const int64_t current = input->scan().limit;
      if (current >= 0 && current <= end) return Transformed{plan, false};
      ScanInfo info = input->scan();
      info.limit = end;
      ARROW_ASSIGN_OR_RAISE(auto scan, LogicalPlan::Scan(std::move(info)));
      ARROW_ASSIGN_OR_RAISE(auto limit, plan->WithInputs({scan}));
      return Transformed{limit, true};
    }
    case LogicalKind::kExplode:
      if (end == LogicalPlan::kNoLimit) return Transformed{plan, false};
      return CapGeneratorsUnderLimit(plan, input, end);
    default:
      return Transformed{plan, false};
  }
}

}  // namespace

arrow::Result<Transformed> PushDownLimit::Apply(const LogicalPlanPtr& plan) const {
  return RewriteTopDown(plan, PushOnce);
}

}  // namespace ketch
