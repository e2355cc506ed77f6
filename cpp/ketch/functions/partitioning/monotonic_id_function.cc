// monotonically_increasing_id(): its type at plan time. Its values come from the MonotonicId plan
// node that select / with_column(s) put below the projection (plan/logical/monotonic_id_plan.h);
// a call anywhere else (a filter, a sort key, an aggregation) has no rows to number.

#include <arrow/api.h>

#include "ketch/expr/function_registry.h"
#include "ketch/functions/partitioning/partitioning_functions.h"

namespace ketch::partitioning {
namespace {

class MonotonicIdFunction : public ScalarFunction {
 public:
  std::string name() const override { return "monotonically_increasing_id"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    if (!arg_types.empty()) return CannotApply(name(), arg_types, arg_exprs, "it takes no arguments");
    return arrow::uint64();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>&, const FunctionOptions&,
                                      const EvalContext&) const override {
    return arrow::Status::Invalid(
        "monotonically_increasing_id() is computed by select / with_column / with_columns only "
        "(add it as a column first, then filter, sort or aggregate on that column)");
  }
};

}  // namespace

arrow::Status RegisterMonotonicIdFunction() {
  return FunctionRegistry::Global()->Register(std::make_shared<MonotonicIdFunction>());
}

}  // namespace ketch::partitioning
