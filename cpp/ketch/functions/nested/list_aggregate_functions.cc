// Per-list aggregates: Arrow's scalar aggregate kernels (sum, mean, min, max, all, any) run on each
// row's values, so every type Arrow aggregates is covered with Arrow's result types.
#include <arrow/compute/api.h>

#include "ketch/functions/nested/list_rows.h"
#include "ketch/functions/nested/nested_function_base.h"
#include "ketch/functions/nested/nested_functions.h"

namespace ketch::nested {
namespace {

namespace cp = arrow::compute;

class ListAggregate : public ScalarFunction {
 public:
  ListAggregate(std::string name, std::string arrow_function)
      : name_(std::move(name)), arrow_function_(std::move(arrow_function)) {}

  std::string name() const override { return name_; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions&) const override {
    const std::string label = "list." + name_.substr(5);
    ARROW_RETURN_NOT_OK(ExpectArgumentCount(label, 1, types));
    ARROW_RETURN_NOT_OK(ExpectListArgument(label, 0, types, exprs));
    auto value_type = ValueField(*types[0])->type();
    ARROW_ASSIGN_OR_RAISE(auto empty, arrow::MakeEmptyArray(value_type));
    auto result = Aggregate(empty);
    if (!result.ok()) {
      return arrow::Status::TypeError(label, " cannot aggregate values of type ", value_type->ToString(),
                                      " in ", exprs[0]->ToString());
    }
    return result->type();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto list, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto rows, ToListRows(list));
    ARROW_ASSIGN_OR_RAISE(auto empty, arrow::MakeEmptyArray(rows.values->type()));
    ARROW_ASSIGN_OR_RAISE(auto null_result, Aggregate(empty));
    std::unique_ptr<arrow::ArrayBuilder> builder;
    ARROW_RETURN_NOT_OK(arrow::MakeBuilder(arrow::default_memory_pool(), null_result.type(), &builder));
    ARROW_RETURN_NOT_OK(builder->Reserve(rows.length));
    for (int64_t i = 0; i < rows.length; ++i) {
      if (!rows.IsValid(i) || rows.Length(i) == 0) {
        ARROW_RETURN_NOT_OK(builder->AppendNull());
        continue;
      }
      ARROW_ASSIGN_OR_RAISE(auto value, Aggregate(rows.Row(i)));
      ARROW_RETURN_NOT_OK(builder->AppendScalar(*value.scalar()));
    }
    std::shared_ptr<arrow::Array> out;
    ARROW_RETURN_NOT_OK(builder->Finish(&out));
    return out;
  }

 private:
  arrow::Result<arrow::Datum> Aggregate(const std::shared_ptr<arrow::Array>& values) const {
    // min_count=1: a row without non-null values gives null (Daft's rule for every list aggregate).
    cp::ScalarAggregateOptions options(/*skip_nulls=*/true, /*min_count=*/1);
    return cp::CallFunction(arrow_function_, {values}, &options);
  }

  std::string name_;
  std::string arrow_function_;
};

}  // namespace

arrow::Status RegisterListAggregateFunctions() {
  auto* registry = FunctionRegistry::Global();
  for (const auto& [name, arrow_name] :
       std::vector<std::pair<std::string, std::string>>{{"list_sum", "sum"},
                                                        {"list_mean", "mean"},
                                                        {"list_min", "min"},
                                                        {"list_max", "max"},
                                                        {"list_bool_and", "all"},
                                                        {"list_bool_or", "any"}}) {
    ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ListAggregate>(name, arrow_name)));
  }
  return arrow::Status::OK();
}

}  // namespace ketch::nested
