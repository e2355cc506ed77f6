#include "ketch/plan/optimizer/push_down_projection.h"

#include <optional>
#include <set>
#include <utility>
#include <vector>

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

arrow::Result<Transformed> RebuildWithChildren(const LogicalPlanPtr& plan,
                                               const std::vector<Required>& required, bool changed) {
  std::vector<LogicalPlanPtr> inputs;
  bool inputs_changed = false;
  for (size_t i = 0; i < plan->inputs().size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(auto child, Prune(plan->inputs()[i], required[i]));
    inputs_changed |= child.changed;
    inputs.push_back(child.plan);
  }
  if (!inputs_changed) return Transformed{plan, changed};
  ARROW_ASSIGN_OR_RAISE(auto rebuilt, plan->WithInputs(std::move(inputs)));
  return Transformed{rebuilt, true};
}

arrow::Result<Transformed> RebuildWithChild(const LogicalPlanPtr& plan, const Required& child_required,
                                            bool changed) {
  return RebuildWithChildren(plan, {child_required}, changed);
}

Required WithColumns(Required required, const std::vector<std::string>& names) {
  if (required) required->insert(names.begin(), names.end());
  return required;
}

// Which input columns of each side a join needs to produce `required` output columns.
std::vector<Required> JoinRequired(const LogicalPlan& join, const Required& required) {
  const auto& spec = join.join();
  if (!required) return {std::nullopt, std::nullopt};
  std::set<std::string> left, right;
  const auto& left_schema = *join.inputs()[0]->schema();
  for (const auto& name : *required) {
    if (left_schema.GetFieldIndex(name) >= 0) left.insert(name);
  }
  // Right output names: merged keys are not output; clashing names got prefix/suffix.
  std::set<std::string> merged;
  for (size_t i = 0; i < spec.left_on.size(); ++i) {
    if (spec.left_on[i] == spec.right_on[i]) merged.insert(spec.right_on[i]);
  }
  // The right columns follow the left ones in the output, in order: read their output names there.
  std::vector<std::pair<std::string, std::string>> right_out;  // (input name, output name)
  const bool keeps_right = spec.how != JoinType::kSemi && spec.how != JoinType::kAnti;
  int out_index = left_schema.num_fields();
  for (const auto& field : join.inputs()[1]->schema()->fields()) {
    if (merged.count(field->name())) {
      if (required->count(field->name())) right.insert(field->name());
      continue;
    }
    if (!keeps_right || out_index >= join.schema()->num_fields()) break;
    right_out.emplace_back(field->name(), join.schema()->field(out_index++)->name());
  }
  for (size_t p = 0; p < right_out.size(); ++p) {
    const auto& [input, out] = right_out[p];
    if (!required->count(out)) continue;
    right.insert(input);
    // Renamed because a column before it has that name (or, renamed again, the renamed one):
    // keep those columns too, or the renaming (and so the column the query reads) would change.
    for (std::string name = input; name != out && name.size() < out.size();
         name = spec.prefix + name + spec.suffix) {
      if (left_schema.GetFieldIndex(name) >= 0) left.insert(name);
      for (size_t q = 0; q < p; ++q) {
        if (right_out[q].second == name) right.insert(right_out[q].first);
      }
    }
  }
  left.insert(spec.left_on.begin(), spec.left_on.end());
  right.insert(spec.right_on.begin(), spec.right_on.end());
  // A cross join's side whose columns are all unused still gives its row count: keep one column.
  if (left.empty() && left_schema.num_fields() > 0) left.insert(left_schema.field(0)->name());
  if (right.empty() && join.inputs()[1]->schema()->num_fields() > 0) {
    right.insert(join.inputs()[1]->schema()->field(0)->name());
  }
  return {left, right};
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
    case LogicalKind::kWrite:
      return RebuildWithChild(plan, std::nullopt, false);
    case LogicalKind::kScan: {
      if (!required) return Transformed{plan, false};
      std::vector<std::string> columns;
      for (const auto& field : plan->scan().file_schema->fields()) {
        if (required->count(field->name())) columns.push_back(field->name());
      }
      if (plan->scan().columns && *plan->scan().columns == columns) return Transformed{plan, false};
      ScanInfo info = plan->scan();
      info.columns = std::move(columns);
      ARROW_ASSIGN_OR_RAISE(auto scan, LogicalPlan::Scan(std::move(info)));
      return Transformed{scan, true};
    }
    case LogicalKind::kInMemorySource:
      return Transformed{plan, false};
    case LogicalKind::kSort: {
      std::vector<std::string> keys;
      for (const auto& key : plan->sort().keys) keys.push_back(key->name());
      return RebuildWithChild(plan, WithColumns(required, keys), false);
    }
    case LogicalKind::kWindow: {
      // The input columns asked for, plus the keys and function inputs the window reads.
      Required child_required = required;
      if (child_required) {
        for (const auto& f : plan->window_functions()) child_required->erase(f.output);
        const auto& spec = plan->window_spec();
        std::vector<std::string> needed(spec.partition_by.begin(), spec.partition_by.end());
        needed.insert(needed.end(), spec.order_by.begin(), spec.order_by.end());
        for (const auto& f : plan->window_functions()) {
          if (!f.input.empty()) needed.push_back(f.input);
          if (!f.default_input.empty()) needed.push_back(f.default_input);
        }
        child_required = WithColumns(child_required, needed);
      }
      return RebuildWithChild(plan, child_required, false);
    }
    case LogicalKind::kAggregate: {
      if (plan->aggregate().phase == AggregatePhase::kFinal) {
        // Reads partial-state columns, not the aggregations' own inputs: keep every column.
        return RebuildWithChild(plan, std::nullopt, false);
      }
      std::set<std::string> needed(plan->aggregate().group_by.begin(), plan->aggregate().group_by.end());
      for (const auto& agg : plan->aggregate().aggregations) agg->CollectColumns(&needed);
      return RebuildWithChild(plan, needed, false);
    }
    case LogicalKind::kJoin:
      return RebuildWithChildren(plan, JoinRequired(*plan, required), false);
    case LogicalKind::kExplode:
      return RebuildWithChild(plan, WithColumns(required, plan->explode_columns()), false);
    case LogicalKind::kConcat: {
      // Both inputs must keep the same columns: each gets a projection to the columns needed
      // (a file scan below would otherwise drop columns an in-memory input keeps).
      std::vector<ExprPtr> kept;
      if (required) {
        for (const auto& field : plan->schema()->fields()) {
          if (required->count(field->name())) kept.push_back(Expr::Column(field->name()));
        }
      }
      if (!required || kept.size() == static_cast<size_t>(plan->schema()->num_fields()) || kept.empty()) {
        return RebuildWithChildren(plan, {required, required}, false);
      }
      std::vector<LogicalPlanPtr> inputs;
      for (const auto& input : plan->inputs()) {
        ARROW_ASSIGN_OR_RAISE(auto project, LogicalPlan::Project(input, kept));
        ARROW_ASSIGN_OR_RAISE(auto pruned, Prune(project, required));
        inputs.push_back(pruned.plan);
      }
      ARROW_ASSIGN_OR_RAISE(auto rebuilt, plan->WithInputs(std::move(inputs)));
      return Transformed{rebuilt, true};
    }
    case LogicalKind::kSample:
    case LogicalKind::kIntoPartitions:
    case LogicalKind::kIntoBatches:
      return RebuildWithChild(plan, required, false);
    case LogicalKind::kRepartition:
      return RebuildWithChild(plan, WithColumns(required, plan->partitioning().by), false);
    case LogicalKind::kMonotonicId: {
      if (!required) return RebuildWithChild(plan, std::nullopt, false);
      std::set<std::string> below = *required;
      below.erase(plan->id_column());
      return RebuildWithChild(plan, below, false);
    }
  }
  return Transformed{plan, false};
}

}  // namespace

arrow::Result<Transformed> PushDownProjection::Apply(const LogicalPlanPtr& plan) const {
  return Prune(plan, std::nullopt);
}

}  // namespace ketch
