#include "ketch/plan/optimizer/stats_pruning.h"

#include <arrow/compute/api.h>

#include <set>

namespace ketch {
namespace {

// a OP b on two scalars of the same type; nullopt when Arrow cannot compare them.
std::optional<bool> Compare(const std::string& op, const std::shared_ptr<arrow::Scalar>& a,
                            const std::shared_ptr<arrow::Scalar>& b) {
  auto result = arrow::compute::CallFunction(op, {arrow::Datum(a), arrow::Datum(b)});
  if (!result.ok() || !result->is_scalar()) return std::nullopt;
  const auto& scalar = result->scalar();
  if (!scalar->is_valid || scalar->type->id() != arrow::Type::BOOL) return std::nullopt;
  return std::static_pointer_cast<arrow::BooleanScalar>(scalar)->value;
}

// The comparison read from the column's side: lit < col is col > lit.
std::string Flip(const std::string& op) {
  if (op == "less") return "greater";
  if (op == "less_equal") return "greater_equal";
  if (op == "greater") return "less";
  if (op == "greater_equal") return "less_equal";
  return op;
}

const Expr* StripAlias(const Expr* e) {
  while (e->kind() == ExprKind::kAlias) e = e->children()[0].get();
  return e;
}

bool ComparisonCannotMatch(std::string op, const Expr& lhs, const Expr& rhs, const StatsLookup& lookup) {
  const Expr* column = StripAlias(&lhs);
  const Expr* literal = StripAlias(&rhs);
  if (column->kind() == ExprKind::kLiteral && literal->kind() == ExprKind::kColumn) {
    std::swap(column, literal);
    op = Flip(op);
  }
  if (column->kind() != ExprKind::kColumn || literal->kind() != ExprKind::kLiteral) return false;
  auto stats = lookup(column->name());
  if (!stats) return false;
  // Every value null: every comparison is null, the filter keeps nothing.
  if (stats->null_count >= 0 && stats->null_count == stats->num_rows) return true;
  if (!literal->literal()->is_valid) return true;  // comparing with null keeps nothing
  if (!stats->min || !stats->max) return false;
  auto cast = arrow::compute::Cast(arrow::Datum(literal->literal()), stats->min->type);
  if (!cast.ok() || !cast->is_scalar()) return false;
  const auto value = cast->scalar();
  // Round trip check: a literal that changed in the cast (2.5 → int 2) proves nothing.
  auto back = arrow::compute::Cast(arrow::Datum(value), literal->literal()->type);
  if (!back.ok() || !back->scalar()->Equals(*literal->literal())) return false;
  std::optional<bool> skip;
  if (op == "equal") {
    auto below = Compare("less", value, stats->min);
    auto above = Compare("greater", value, stats->max);
    if (below && above) skip = *below || *above;
  } else if (op == "less") {
    skip = Compare("greater_equal", stats->min, value);
  } else if (op == "less_equal") {
    skip = Compare("greater", stats->min, value);
  } else if (op == "greater") {
    skip = Compare("less_equal", stats->max, value);
  } else if (op == "greater_equal") {
    skip = Compare("less", stats->max, value);
  } else if (op == "not_equal" && !arrow::is_floating(value->type->id())) {  // NaN is not in min/max
    auto lo = Compare("equal", stats->min, value);
    auto hi = Compare("equal", stats->max, value);
    if (lo && hi) skip = *lo && *hi;
  }
  return skip.value_or(false);
}

}  // namespace

bool CannotMatch(const Expr& predicate, const StatsLookup& stats) {
  const Expr& e = *StripAlias(&predicate);
  if (e.kind() == ExprKind::kLiteral) {
    const auto& value = e.literal();
    return !value->is_valid || (value->type->id() == arrow::Type::BOOL &&
                                !std::static_pointer_cast<arrow::BooleanScalar>(value)->value);
  }
  if (e.kind() != ExprKind::kCall) return false;
  const auto& name = e.name();
  const auto& args = e.children();
  if ((name == "and_kleene" || name == "and") && args.size() == 2) {
    return CannotMatch(*args[0], stats) || CannotMatch(*args[1], stats);
  }
  if ((name == "or_kleene" || name == "or") && args.size() == 2) {
    return CannotMatch(*args[0], stats) && CannotMatch(*args[1], stats);
  }
  if ((name == "is_null" || name == "is_valid") && args.size() == 1) {
    const Expr* column = StripAlias(args[0].get());
    if (column->kind() != ExprKind::kColumn) return false;
    auto s = stats(column->name());
    if (!s || s->null_count < 0) return false;
    return name == "is_null" ? s->null_count == 0 : s->null_count == s->num_rows;
  }
  static const std::set<std::string> kComparisons = {"equal",      "not_equal", "less",
                                                     "less_equal", "greater",   "greater_equal"};
  if (kComparisons.count(name) && args.size() == 2)
    return ComparisonCannotMatch(name, *args[0], *args[1], stats);
  return false;
}

}  // namespace ketch
