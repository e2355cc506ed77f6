#include "ketch/plan/logical/aggregate_expressions.h"

#include <map>
#include <set>
#include <string>
#include <utility>

#include "ketch/plan/logical/window_spec.h"

namespace ketch {

bool ContainsAggregationCall(const Expr& e) {
  if (e.kind() == ExprKind::kCall && e.name() == kWindowCall) return false;  // an aggregation over a window
  if (e.kind() == ExprKind::kCall && e.name().rfind("agg_", 0) == 0) return true;
  for (const auto& child : e.children()) {
    if (ContainsAggregationCall(*child)) return true;
  }
  return false;
}

namespace {

bool IsAggregationCall(const Expr& e) {
  return e.kind() == ExprKind::kCall && e.name().rfind("agg_", 0) == 0;
}

/// An aggregation the Aggregate node takes as it is: an aggregation call (maybe aliased) whose
/// input holds no aggregation.
bool IsPlainAggregation(const Expr& e) {
  const Expr* call = e.kind() == ExprKind::kAlias ? e.children()[0].get() : &e;
  if (!IsAggregationCall(*call)) return false;
  for (const auto& child : call->children()) {
    if (ContainsAggregationCall(*child)) return false;
  }
  return true;
}

arrow::Status NotComposed(const Expr& e) {
  return arrow::Status::Invalid(
      "Expressions in aggregations must be composed of non-nested aggregation expressions, got ",
      e.ToString());
}

/// Rewrites one aggregation expression for the projection above the Aggregate node.
class AggregationSplitter {
 public:
  /// `keys`: the rendering of each key expression (and of a column named as its output) -> its
  /// column in the Aggregate node's output; `calls` collects the aggregation calls, aliased.
  AggregationSplitter(std::map<std::string, std::string> keys, std::vector<ExprPtr>* calls)
      : keys_(std::move(keys)), calls_(calls) {}

  arrow::Result<ExprPtr> Rewrite(const ExprPtr& e, const Expr& whole) {
    if (IsAggregationCall(*e)) {
      for (const auto& child : e->children()) {
        if (ContainsAggregationCall(*child)) return NotComposed(whole);
      }
      const std::string name = "__agg_" + std::to_string(calls_->size());
      calls_->push_back(Expr::Alias(e, name));
      return Expr::Column(name);
    }
    if (e->kind() != ExprKind::kAlias) {
      auto key = keys_.find(e->ToString());
      if (key != keys_.end()) return Expr::Column(key->second);
    }
    if (e->kind() == ExprKind::kColumn) return NotComposed(whole);
    std::vector<ExprPtr> children;
    children.reserve(e->children().size());
    for (const auto& child : e->children()) {
      ARROW_ASSIGN_OR_RAISE(auto rewritten, Rewrite(child, whole));
      children.push_back(std::move(rewritten));
    }
    return e->WithChildren(std::move(children));
  }

 private:
  std::map<std::string, std::string> keys_;
  std::vector<ExprPtr>* calls_;
};

}  // namespace

arrow::Result<LogicalPlanPtr> AggregateExpressions(LogicalPlanPtr input, std::vector<ExprPtr> keys,
                                                   std::vector<ExprPtr> aggregations) {
  for (const auto& agg : aggregations) {
    if (ContainsWindowCall(*agg)) {
      return arrow::Status::Invalid("window expressions cannot be used in an aggregation: ", agg->ToString());
    }
  }
  bool plain = true;
  for (const auto& key : keys) plain = plain && key->kind() == ExprKind::kColumn;
  for (const auto& agg : aggregations) plain = plain && IsPlainAggregation(*agg);
  if (plain) {
    AggregateSpec spec;
    for (const auto& key : keys) spec.group_by.push_back(key->name());
    spec.aggregations = std::move(aggregations);
    return LogicalPlan::Aggregate(std::move(input), std::move(spec));
  }
  for (const auto& key : keys) {
    if (ContainsAggregationCall(*key)) {
      return arrow::Status::Invalid("a group key cannot hold an aggregation, got ", key->ToString());
    }
  }
  // Keys: plain columns group as they are; computed ones get a hidden column below the aggregate.
  AggregateSpec spec;
  std::vector<ExprPtr> computed_keys;
  std::map<std::string, std::string> key_columns;  // key rendering -> its column in the aggregate
  for (size_t i = 0; i < keys.size(); ++i) {
    const ExprPtr& key = keys[i];
    std::string column = key->name();
    if (key->kind() != ExprKind::kColumn) {
      column = "__group_key_" + std::to_string(i);
      computed_keys.push_back(Expr::Alias(key, column));
    }
    spec.group_by.push_back(column);
    const Expr& bare = key->kind() == ExprKind::kAlias ? *key->children()[0] : *key;
    key_columns.emplace(bare.ToString(), column);
    key_columns.emplace(Expr::Column(key->OutputName())->ToString(), column);
  }
  if (!computed_keys.empty()) {
    std::vector<ExprPtr> exprs;
    for (const auto& field : input->schema()->fields()) exprs.push_back(Expr::Column(field->name()));
    exprs.insert(exprs.end(), computed_keys.begin(), computed_keys.end());
    ARROW_ASSIGN_OR_RAISE(input, LogicalPlan::Project(std::move(input), std::move(exprs)));
  }
  // Aggregations: each aggregation call becomes a column of the aggregate, the rest a projection.
  AggregationSplitter splitter(key_columns, &spec.aggregations);
  std::vector<ExprPtr> outputs;
  for (size_t i = 0; i < keys.size(); ++i) {
    outputs.push_back(Expr::Alias(Expr::Column(spec.group_by[i]), keys[i]->OutputName()));
  }
  for (const auto& agg : aggregations) {
    std::set<std::string> reads;
    agg->CollectColumns(&reads);
    if (!ContainsAggregationCall(*agg) && reads.empty()) return NotComposed(*agg);  // e.g. lit(1)
    const std::string name = agg->OutputName();
    const ExprPtr& body = agg->kind() == ExprKind::kAlias ? agg->children()[0] : agg;
    ARROW_ASSIGN_OR_RAISE(auto rewritten, splitter.Rewrite(body, *agg));
    outputs.push_back(Expr::Alias(std::move(rewritten), name));
  }
  ARROW_ASSIGN_OR_RAISE(auto aggregate, LogicalPlan::Aggregate(std::move(input), std::move(spec)));
  std::set<std::string> seen;
  for (const auto& out : outputs) {
    if (!seen.insert(out->OutputName()).second) {
      return arrow::Status::Invalid("duplicate output column '", out->OutputName(),
                                    "' in agg(); rename with .alias()");
    }
  }
  return LogicalPlan::Project(std::move(aggregate), std::move(outputs));
}

}  // namespace ketch
