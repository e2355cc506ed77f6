#include "ketch/expr/expr_analysis.h"

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

}  // namespace ketch
