#pragma once

#include <arrow/api.h>

#include <vector>

#include "ketch/expr/expr.h"
#include "ketch/expr/function_registry.h"

namespace ketch {

/// The name `element()` gives the list element inside a lambda body (Daft's `col("")`).
inline constexpr char kElementColumn[] = "";

/// True for a call of a lambda function (list_map, list_filter): its first argument is read from
/// the batch, the others are bodies over `element()` that the function evaluates on the list's
/// values. Tree walks that look at the batch's columns (CollectColumns, SubstituteColumns, stage
/// splitting) descend into the first argument only.
bool IsLambdaCall(const Expr& expr);

/// A function whose calls are lambda calls (IsLambdaCall). At plan time ResolveType gets nullptr
/// for a body's type (the function resolves the body itself over element()); at run time
/// ExecuteLambda replaces Execute.
class LambdaFunction : public ScalarFunction {
 public:
  /// `args` holds the first argument only, evaluated over the batch (`ctx.num_rows` values or a
  /// scalar); `arg_exprs` all arguments, the bodies among them.
  virtual arrow::Result<arrow::Datum> ExecuteLambda(const std::vector<arrow::Datum>& args,
                                                    const std::vector<ExprPtr>& arg_exprs,
                                                    const FunctionOptions& options,
                                                    const EvalContext& ctx) const = 0;
};

}  // namespace ketch
