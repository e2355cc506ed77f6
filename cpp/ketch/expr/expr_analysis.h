#pragma once

#include <map>
#include <string>
#include <vector>

#include "ketch/expr/expr.h"

namespace ketch {

/// The conjuncts of a predicate: `a & (b & c)` → [a, b, c] (and_kleene calls split recursively).
void SplitConjuncts(const ExprPtr& predicate, std::vector<ExprPtr>* out);

/// `parts[0] & parts[1] & ...` (and_kleene); nullptr for no parts.
ExprPtr Conjunction(const std::vector<ExprPtr>& parts);

/// `expr` with each col(name) found in `mapping` replaced by its expression (a projection's
/// expressions substituted into what is evaluated above it).
ExprPtr SubstituteColumns(const ExprPtr& expr, const std::map<std::string, ExprPtr>& mapping);

/// True when the expression calls something costly per row: a Python UDF, a URL function
/// (download/upload), a file function (reads) or an image kernel. The optimizer never duplicates
/// such an expression, and gives the scans below it more, smaller tasks.
bool CallsExpensiveFunction(const Expr& expr);

/// True unless the expression is built only from comparisons, and/or/not, is_null/is_valid/is_nan,
/// columns and literals: anything else (a cast, checked arithmetic, a UDF, a kernel) may raise on
/// some rows, so it must not run on rows an earlier filter removed.
bool MayFail(const Expr& expr);

}  // namespace ketch
