// _source_row(): each row's source row, for moving a source's rows between tasks without losing
// their numbering (the Ray runner's split row groups).

#include "ketch/functions/internal/source_row_function.h"

#include <arrow/api.h>

#include "ketch/expr/function_registry.h"

namespace ketch::internal {
namespace {

class SourceRowFunction : public ScalarFunction {
 public:
  std::string name() const override { return "_source_row"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>&,
      const FunctionOptions&) const override {
    if (!arg_types.empty()) {
      return arrow::Status::TypeError("_source_row takes no arguments, got ", arg_types.size());
    }
    return arrow::int64();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>&, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    if (ctx.source_rows && ctx.source_rows->length() == ctx.num_rows) return arrow::Datum(ctx.source_rows);
    arrow::Int64Builder out;
    ARROW_RETURN_NOT_OK(out.Reserve(ctx.num_rows));
    for (int64_t i = 0; i < ctx.num_rows; ++i) out.UnsafeAppend(ctx.SourceRow(i));
    ARROW_ASSIGN_OR_RAISE(auto array, out.Finish());
    return arrow::Datum(array);
  }
};

}  // namespace

arrow::Status RegisterInternalFunctions() {
  return FunctionRegistry::Global()->Register(std::make_shared<SourceRowFunction>());
}

}  // namespace ketch::internal
