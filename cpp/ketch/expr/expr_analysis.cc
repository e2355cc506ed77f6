#include "ketch/expr/expr_analysis.h"

#include <set>
#include <string>

#include "ketch/expr/lambda_call.h"

namespace ketch {

void SplitConjuncts(const ExprPtr& predicate, std::vector<ExprPtr>* out) {
  if (predicate->kind() == ExprKind::kCall && predicate->name() == "and_kleene" &&
      predicate->children().size() == 2) {
    SplitConjuncts(predicate->children()[0], out);
    SplitConjuncts(predicate->children()[1], out);
    return;
  }
  out->push_back(predicate);
}

ExprPtr Conjunction(const std::vector<ExprPtr>& parts) {
  ExprPtr out;
  for (const auto& p : parts) out = out ? Expr::Call("and_kleene", {out, p}) : p;
  return out;
}

ExprPtr SubstituteColumns(const ExprPtr& expr, const std::map<std::string, ExprPtr>& mapping) {
  if (expr->kind() == ExprKind::kColumn) {
    auto it = mapping.find(expr->name());
    return it == mapping.end() ? expr : it->second;
  }
  std::vector<ExprPtr> children;
  const bool lambda = IsLambdaCall(*expr);
  for (const auto& child : expr->children()) {
    // A lambda's bodies read element(), never the batch's columns.
    children.push_back(lambda && !children.empty() ? child : SubstituteColumns(child, mapping));
  }
  return expr->WithChildren(std::move(children));
}

bool CallsExpensiveFunction(const Expr& expr) {
  if (expr.kind() == ExprKind::kUdf) return true;
  if (expr.kind() == ExprKind::kCall &&
      (expr.name().rfind("url_", 0) == 0 || expr.name().rfind("image_", 0) == 0 ||
       expr.name().rfind("file_", 0) == 0)) {
    return true;
  }
  for (const auto& child : expr.children()) {
    if (CallsExpensiveFunction(*child)) return true;
  }
  return false;
}

bool MayFail(const Expr& expr) {
  static const std::set<std::string> kSafe = {
      "equal",     "not_equal", "less", "less_equal", "greater", "greater_equal", "and_kleene",
      "or_kleene", "and",       "or",   "invert",     "is_null", "is_valid",      "is_nan"};
  switch (expr.kind()) {
    case ExprKind::kColumn:
    case ExprKind::kLiteral:
      return false;
    case ExprKind::kAlias:
      return MayFail(*expr.children()[0]);
    case ExprKind::kCall:
      if (!kSafe.count(expr.name())) return true;
      for (const auto& child : expr.children()) {
        if (MayFail(*child)) return true;
      }
      return false;
    default:
      return true;  // casts, UDFs
  }
}

}  // namespace ketch
