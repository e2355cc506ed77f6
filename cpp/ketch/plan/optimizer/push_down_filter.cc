#include "ketch/plan/optimizer/push_down_filter.h"

#include <map>

#include "ketch/expr/expr_analysis.h"

namespace ketch {
namespace {

// col(x) or col(x) as y → col(x); anything else → nullptr (not worth duplicating below the projection).
ExprPtr PlainColumn(const ExprPtr& expr) {
  if (expr->kind() == ExprKind::kColumn) return expr;
  if (expr->kind() == ExprKind::kAlias && expr->children()[0]->kind() == ExprKind::kColumn) {
    return expr->children()[0];
  }
  return nullptr;
}

ExprPtr And(ExprPtr a, ExprPtr b) { return Expr::Call("and_kleene", {std::move(a), std::move(b)}); }

bool ReadsOnly(const Expr& expr, const arrow::Schema& schema) {
  std::set<std::string> used;
  expr.CollectColumns(&used);
  for (const auto& name : used) {
    if (schema.GetFieldIndex(name) < 0) return false;
  }
  return true;
}

// Equalities between a left and a right column of an inner or cross join become its keys (a cross
// join an inner one): `FROM a, b WHERE a.x = b.y` and `a.join(b, how="cross").where(...)` hash-join
// instead of making every pair. Only a right column that kept its name in the output (no clash
// with the left side) qualifies, so the output columns stay the same; an equality whose columns
// cannot be keys (types the join refuses) stays a filter. Both drop rows with a null key.
arrow::Result<std::pair<LogicalPlanPtr, std::vector<ExprPtr>>> EqualitiesToKeys(
    const LogicalPlanPtr& join, std::vector<ExprPtr> conjuncts) {
  const JoinType how = join->join().how;
  if (how != JoinType::kInner && how != JoinType::kCross) return std::make_pair(join, std::move(conjuncts));
  const auto& left_schema = *join->inputs()[0]->schema();
  const auto& right_schema = *join->inputs()[1]->schema();
  JoinSpec spec = join->join();
  std::vector<ExprPtr> kept;
  LogicalPlanPtr out = join;
  for (const auto& c : conjuncts) {
    if (c->kind() == ExprKind::kCall && c->name() == "equal" && c->children().size() == 2 &&
        c->children()[0]->kind() == ExprKind::kColumn && c->children()[1]->kind() == ExprKind::kColumn) {
      std::string a = c->children()[0]->name(), b = c->children()[1]->name();
      if (left_schema.GetFieldIndex(a) < 0) std::swap(a, b);
      const bool pair = left_schema.GetFieldIndex(a) >= 0 && right_schema.GetFieldIndex(b) >= 0 &&
                        left_schema.GetFieldIndex(b) < 0 && right_schema.GetFieldIndex(a) < 0;
      if (pair) {
        JoinSpec keyed = spec;
        keyed.how = JoinType::kInner;
        keyed.left_on.push_back(a);
        keyed.right_on.push_back(b);
        auto rebuilt = LogicalPlan::Join(join->inputs()[0], join->inputs()[1], keyed);
        if (rebuilt.ok() && (*rebuilt)->schema()->Equals(*join->schema())) {
          spec = std::move(keyed);
          out = *rebuilt;
          continue;
        }
      }
    }
    kept.push_back(c);
  }
  return std::make_pair(out, std::move(kept));
}

// Conjuncts that read only left columns go below an inner/left/semi/anti join's left side, and
// conjuncts on unrenamed right columns below an inner join's right side.
arrow::Result<Transformed> PushIntoJoin(const LogicalPlanPtr& plan) {
  std::vector<ExprPtr> all;
  SplitConjuncts(plan->predicate(), &all);
  ARROW_ASSIGN_OR_RAISE(auto keyed, EqualitiesToKeys(plan->inputs()[0], std::move(all)));
  const bool rekeyed = keyed.first != plan->inputs()[0];
  const auto& join = keyed.first;
  const JoinType how = join->join().how;
  const bool to_left = how == JoinType::kInner || how == JoinType::kLeft || how == JoinType::kSemi ||
                       how == JoinType::kAnti || how == JoinType::kCross;
  const bool to_right = how == JoinType::kInner || how == JoinType::kCross;
  std::vector<ExprPtr> conjuncts = std::move(keyed.second), left, right, kept;
  const auto& left_schema = *join->inputs()[0]->schema();
  const auto& right_schema = *join->inputs()[1]->schema();
  for (const auto& c : conjuncts) {
    if (to_left && ReadsOnly(*c, left_schema)) {
      left.push_back(c);
    } else if (to_right && ReadsOnly(*c, right_schema) && !ReadsOnly(*c, left_schema)) {
      // Only names that kept their spelling in the output (no clash with the left side).
      std::set<std::string> used;
      c->CollectColumns(&used);
      bool clash = false;
      for (const auto& n : used) clash |= left_schema.GetFieldIndex(n) >= 0;
      (clash ? kept : right).push_back(c);
    } else {
      kept.push_back(c);
    }
  }
  if (left.empty() && right.empty()) {
    if (!rekeyed) return Transformed{plan, false};
    if (kept.empty()) return Transformed{join, true};
    ARROW_ASSIGN_OR_RAISE(auto filter, LogicalPlan::Filter(join, Conjunction(kept)));
    return Transformed{filter, true};
  }
  LogicalPlanPtr l = join->inputs()[0], r = join->inputs()[1];
  if (!left.empty()) {
    ARROW_ASSIGN_OR_RAISE(l, LogicalPlan::Filter(l, Conjunction(left)));
  }
  if (!right.empty()) {
    ARROW_ASSIGN_OR_RAISE(r, LogicalPlan::Filter(r, Conjunction(right)));
  }
  ARROW_ASSIGN_OR_RAISE(auto new_join, join->WithInputs({l, r}));
  if (kept.empty()) return Transformed{new_join, true};
  ARROW_ASSIGN_OR_RAISE(auto filter, LogicalPlan::Filter(new_join, Conjunction(kept)));
  return Transformed{filter, true};
}

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
      // Conjunct by conjunct: those reading only plain columns or cheap expressions of the
      // projection go below it (substituted); those reading a UDF's, download's or image kernel's
      // output stay above. A conjunct that can fail only moves down if every conjunct before it
      // did (it must not run on rows an earlier one removes).
      std::map<std::string, ExprPtr> outputs;
      for (const auto& expr : input->exprs()) outputs[expr->OutputName()] = expr;
      std::map<std::string, ExprPtr> mapping;
      std::vector<ExprPtr> conjuncts, below, above;
      SplitConjuncts(predicate, &conjuncts);
      for (const auto& conjunct : conjuncts) {
        std::set<std::string> used;
        conjunct->CollectColumns(&used);
        bool pushable = above.empty() || !MayFail(*conjunct);
        for (const auto& name : used) {
          auto it = outputs.find(name);
          if (it == outputs.end()) continue;
          if (CallsExpensiveFunction(*it->second)) pushable = false;
        }
        (pushable ? below : above).push_back(conjunct);
      }
      if (below.empty()) return Transformed{plan, false};
      for (const auto& expr : input->exprs()) {
        auto column = PlainColumn(expr);
        mapping[expr->OutputName()] =
            column ? column : (expr->kind() == ExprKind::kAlias ? expr->children()[0] : expr);
      }
      ARROW_ASSIGN_OR_RAISE(auto filter, LogicalPlan::Filter(input->inputs()[0],
                                                             SubstituteColumns(Conjunction(below), mapping)));
      ARROW_ASSIGN_OR_RAISE(auto project, LogicalPlan::Project(filter, input->exprs()));
      if (above.empty()) return Transformed{project, true};
      ARROW_ASSIGN_OR_RAISE(auto kept, LogicalPlan::Filter(project, Conjunction(above)));
      return Transformed{kept, true};
    }
    case LogicalKind::kSort:
    case LogicalKind::kRepartition: {
      // Both keep every row whatever the others are (a row's partition depends on the row alone);
      // into_partitions and into_batches are not passed: a filter below would change their sizes.
      ARROW_ASSIGN_OR_RAISE(auto filter, LogicalPlan::Filter(input->inputs()[0], predicate));
      ARROW_ASSIGN_OR_RAISE(auto sort, input->WithInputs({filter}));
      return Transformed{sort, true};
    }
    case LogicalKind::kJoin:
      return PushIntoJoin(plan);
    case LogicalKind::kScan: {
      // A filter cannot go below a pushed limit: it would change which rows the limit keeps.
      if (input->scan().limit >= 0) return Transformed{plan, false};
      ScanInfo info = input->scan();
      info.filter = info.filter ? And(info.filter, predicate) : predicate;
      ARROW_ASSIGN_OR_RAISE(auto scan, LogicalPlan::Scan(std::move(info)));
      return Transformed{scan, true};
    }
    default:
      return Transformed{plan, false};
  }
}

}  // namespace

arrow::Result<Transformed> PushDownFilter::Apply(const LogicalPlanPtr& plan) const {
  return RewriteTopDown(plan, PushOnce);
}

}  // namespace ketch
