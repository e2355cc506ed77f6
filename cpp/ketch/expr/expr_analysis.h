#pragma once

#include <vector>

#include "ketch/expr/expr.h"

namespace ketch {

/// The conjuncts of a predicate: `a & (b & c)` → [a, b, c] (and_kleene calls split recursively).
void SplitConjuncts(const ExprPtr& predicate, std::vector<ExprPtr>* out);

/// `parts[0] & parts[1] & ...` (and_kleene); nullptr for no parts.
ExprPtr Conjunction(const std::vector<ExprPtr>& parts);

/// True when the expression calls something costly per row: a Python UDF, a URL function
/// (download/upload), a file function (reads) or an image kernel. The optimizer never duplicates
/// such an expression, and gives the scans below it more, smaller tasks.
bool CallsExpensiveFunction(const Expr& expr);

}  // namespace ketch
