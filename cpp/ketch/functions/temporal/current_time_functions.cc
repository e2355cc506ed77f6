// current_timestamp() and current_date(): the UTC clock read when the query runs, not when the
// expression is built (Daft reads it at execution too). Each kernel call (one morsel) reads the
// clock once and returns one scalar for all its rows; the optimizer does not fold calls without
// arguments, so every execution of the same plan reads the clock again.

#include <arrow/api.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ketch/expr/function_registry.h"
#include "ketch/functions/temporal/civil_date.h"
#include "ketch/functions/temporal/temporal_functions.h"

namespace ketch::temporal {
namespace {

int64_t MicrosSinceEpoch() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class CurrentTimeFunction : public ScalarFunction {
 public:
  explicit CurrentTimeFunction(bool date) : date_(date) {}

  std::string name() const override { return date_ ? "current_date" : "current_timestamp"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    if (!arg_types.empty()) return CannotApply(name(), arg_types, arg_exprs, name() + " takes no arguments");
    return type();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>&, const FunctionOptions&,
                                      const EvalContext&) const override {
    const int64_t micros = MicrosSinceEpoch();
    if (date_) {
      return arrow::Datum(std::make_shared<arrow::Date32Scalar>(
          static_cast<int32_t>(FloorDiv(micros, int64_t{86'400'000'000}))));
    }
    return arrow::Datum(std::make_shared<arrow::TimestampScalar>(micros, type()));
  }

 private:
  std::shared_ptr<arrow::DataType> type() const {
    return date_ ? arrow::date32() : arrow::timestamp(arrow::TimeUnit::MICRO);
  }

  bool date_;
};

}  // namespace

arrow::Status RegisterCurrentTimeFunctions() {
  auto* registry = FunctionRegistry::Global();
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<CurrentTimeFunction>(true)));
  return registry->Register(std::make_shared<CurrentTimeFunction>(false));
}

}  // namespace ketch::temporal
