// dt_add_interval(ts|date, interval; negate): calendar arithmetic with month_day_nano intervals, which
// Arrow's add/subtract do not take. Months move the calendar date and clamp the day to the target
// month's length (Jan 31 + 1 month = Feb 29 in a leap year), then days, then nanoseconds are added.
// Zoned timestamps move on their local wall clock and are placed back in their zone.
#include <arrow/compute/api.h>

#include <algorithm>

#include "ketch/expr/function_registry.h"
#include "ketch/functions/temporal/civil_date.h"
#include "ketch/functions/temporal/temporal_functions.h"

namespace ketch::temporal {
namespace {

namespace cp = arrow::compute;

int64_t AddMonths(int64_t days, int64_t months) {
  if (months == 0) return days;
  const CivilDate date = CivilFromDays(days);
  return ShiftMonthsClamped(date, date.year * 12 + (date.month - 1) + months);
}

class AddInterval : public ScalarFunction {
 public:
  std::string name() const override { return "dt_add_interval"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions&) const override {
    if (types.size() != 2) return arrow::Status::Invalid("interval arithmetic takes 2 arguments");
    const auto id = types[0]->id();
    if (id != arrow::Type::TIMESTAMP && id != arrow::Type::DATE32) {
      return arrow::Status::TypeError("interval arithmetic expects a timestamp or date, but ",
                                      exprs[0]->ToString(), " has type ", types[0]->ToString());
    }
    if (types[1]->id() != arrow::Type::INTERVAL_MONTH_DAY_NANO) {
      return arrow::Status::TypeError("interval arithmetic expects an interval, but ", exprs[1]->ToString(),
                                      " has type ", types[1]->ToString());
    }
    return types[0];
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    int64_t sign = 1;
    if (HasOption(options, "negate")) {
      ARROW_ASSIGN_OR_RAISE(auto negate, options.at("negate")->CastTo(arrow::boolean()));
      if (static_cast<const arrow::BooleanScalar&>(*negate).value) sign = -1;
    }
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto interval_array, ToArray(args[1], ctx.num_rows));
    const auto& intervals = static_cast<const arrow::MonthDayNanoIntervalArray&>(*interval_array);
    const bool is_date = input->type_id() == arrow::Type::DATE32;
    std::string zone;
    std::shared_ptr<arrow::Array> wall = input;
    if (!is_date) {
      zone = static_cast<const arrow::TimestampType&>(*input->type()).timezone();
      if (!zone.empty()) {
        ARROW_ASSIGN_OR_RAISE(auto local, cp::CallFunction("local_timestamp", {input}));
        wall = local.make_array();
      }
    }
    const int64_t unit_nanos =
        is_date ? kNanosPerDay : NanosPerUnit(static_cast<const arrow::TimestampType&>(*wall->type()).unit());
    const int64_t per_day = kNanosPerDay / unit_nanos;
    ARROW_ASSIGN_OR_RAISE(auto as_int, cp::Cast(wall, is_date ? arrow::int32() : arrow::int64(),
                                                cp::CastOptions::Unsafe(arrow::int64())));
    ARROW_ASSIGN_OR_RAISE(auto wide, cp::Cast(as_int, arrow::int64()));
    const auto values_holder = wide.make_array();  // the Array must outlive `values`
    const auto& values = static_cast<const arrow::Int64Array&>(*values_holder);
    arrow::Int64Builder out;
    ARROW_RETURN_NOT_OK(out.Reserve(values.length()));
    for (int64_t i = 0; i < values.length(); ++i) {
      if (values.IsNull(i) || intervals.IsNull(i)) {
        out.UnsafeAppendNull();
        continue;
      }
      const auto step = intervals.GetValue(i);
      const int64_t v = values.Value(i);
      const int64_t day = is_date ? v : FloorDiv(v, per_day);
      const int64_t time_of_day = is_date ? 0 : v - day * per_day;
      const int64_t nanos = sign * step.nanoseconds;
      int64_t new_day = AddMonths(day, sign * step.months) + sign * step.days;
      if (is_date) {
        out.UnsafeAppend(new_day + FloorDiv(nanos, kNanosPerDay));
        continue;
      }
      int64_t result;
      if (__builtin_mul_overflow(new_day, per_day, &result) ||
          __builtin_add_overflow(result, time_of_day + nanos / unit_nanos, &result)) {
        return arrow::Status::Invalid("interval arithmetic overflows the timestamp range at row ",
                                      ctx.SourceRow(i));
      }
      out.UnsafeAppend(result);
    }
    ARROW_ASSIGN_OR_RAISE(auto result, out.Finish());
    if (is_date) {
      ARROW_ASSIGN_OR_RAISE(auto narrow, cp::Cast(result, arrow::int32()));
      return cp::Cast(narrow, arrow::date32());
    }
    ARROW_ASSIGN_OR_RAISE(auto naive, cp::Cast(result, wall->type()));
    if (zone.empty()) return naive;
    cp::AssumeTimezoneOptions assume(zone, cp::AssumeTimezoneOptions::AMBIGUOUS_EARLIEST,
                                     cp::AssumeTimezoneOptions::NONEXISTENT_LATEST);
    return cp::CallFunction("assume_timezone", {naive}, &assume);
  }
};

}  // namespace

arrow::Status RegisterIntervalArithmetic() {
  return FunctionRegistry::Global()->Register(std::make_shared<AddInterval>());
}

}  // namespace ketch::temporal
