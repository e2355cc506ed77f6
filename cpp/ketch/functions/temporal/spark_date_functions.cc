// Spark-style date kernels behind ketch.functions (Daft 0.7.26's make_date, make_timestamp,
// add_months with a column of counts, months_between, to_utc_timestamp), the ones no composition of
// existing kernels gets right: null for impossible dates instead of an error, Spark's month
// clamping per row, Spark's months_between rounding, and an error (not a silent shift) for wall
// clocks in a DST gap or overlap. Semantics: Spark's DateTimeUtils (monthsBetween, dateAddMonths).
#include <arrow/compute/api.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "ketch/expr/function_registry.h"
#include "ketch/functions/temporal/civil_date.h"
#include "ketch/functions/temporal/temporal_functions.h"

namespace ketch::temporal {
namespace {

namespace cp = arrow::compute;
using TypeVector = std::vector<std::shared_ptr<arrow::DataType>>;

constexpr int64_t kMicrosPerSecond = 1'000'000LL;
constexpr int64_t kSecondsPerDay = 86'400LL;
// chrono's NaiveDate range (Daft's): years outside give null.
constexpr int64_t kMaxYear = 262'142;

std::optional<int64_t> CheckedDaysFromCivil(int64_t year, int64_t month, int64_t day) {
  if (year < -kMaxYear - 1 || year > kMaxYear || month < 1 || month > 12) return std::nullopt;
  if (day < 1 || day > DaysInMonth(year, month)) return std::nullopt;
  return DaysFromCivil(year, month, day);
}

bool IsInteger(const arrow::DataType& type) {
  return arrow::is_integer(type.id()) || type.id() == arrow::Type::NA;
}
bool IsNumeric(const arrow::DataType& type) { return IsInteger(type) || arrow::is_floating(type.id()); }
bool IsDateOrTimestamp(const arrow::DataType& type) {
  return type.id() == arrow::Type::DATE32 || type.id() == arrow::Type::DATE64 ||
         type.id() == arrow::Type::TIMESTAMP;
}

std::shared_ptr<arrow::Array> Reinterpret(const std::shared_ptr<arrow::Array>& array,
                                          std::shared_ptr<arrow::DataType> type) {
  auto data = array->data()->Copy();
  data->type = std::move(type);
  return arrow::MakeArray(data);
}

// The argument as `num_rows` values of `type` (Arrow's safe cast).
template <typename ArrayType>
arrow::Result<std::shared_ptr<ArrayType>> Column(const arrow::Datum& datum, int64_t num_rows,
                                                 const std::shared_ptr<arrow::DataType>& type) {
  ARROW_ASSIGN_OR_RAISE(auto array, ToArray(datum, num_rows));
  ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(array, type));
  return std::static_pointer_cast<ArrayType>(cast.make_array());
}

// Wall-clock (day, microsecond of day) of each date or timestamp; a zoned timestamp's local clock.
struct WallClock {
  std::shared_ptr<arrow::Int64Array> days;
  std::shared_ptr<arrow::Int64Array> micros_of_day;  // all 0 for dates
};

arrow::Result<WallClock> ToWallClock(const arrow::Datum& datum, int64_t num_rows) {
  ARROW_ASSIGN_OR_RAISE(auto input, ToArray(datum, num_rows));
  if (input->type_id() != arrow::Type::TIMESTAMP) {
    ARROW_ASSIGN_OR_RAISE(auto days, cp::Cast(input, arrow::date32()));
    ARROW_ASSIGN_OR_RAISE(auto as_int,
                          cp::Cast(Reinterpret(days.make_array(), arrow::int32()), arrow::int64()));
    auto wide = std::static_pointer_cast<arrow::Int64Array>(as_int.make_array());
    ARROW_ASSIGN_OR_RAISE(auto zeros, arrow::MakeArrayFromScalar(arrow::Int64Scalar(0), num_rows));
    return WallClock{wide, std::static_pointer_cast<arrow::Int64Array>(zeros)};
  }
  const auto& ts_type = static_cast<const arrow::TimestampType&>(*input->type());
  if (!ts_type.timezone().empty()) {
    ARROW_ASSIGN_OR_RAISE(auto local, cp::CallFunction("local_timestamp", {input}));
    input = local.make_array();
  }
  const int64_t per_second = 1'000'000'000LL / NanosPerUnit(ts_type.unit());
  const auto values = Reinterpret(input, arrow::int64());
  const auto& ints = static_cast<const arrow::Int64Array&>(*values);
  arrow::Int64Builder days;
  arrow::Int64Builder micros;
  ARROW_RETURN_NOT_OK(days.Reserve(num_rows));
  ARROW_RETURN_NOT_OK(micros.Reserve(num_rows));
  const int64_t per_day = per_second * kSecondsPerDay;
  for (int64_t i = 0; i < num_rows; ++i) {
    if (ints.IsNull(i)) {
      days.UnsafeAppendNull();
      micros.UnsafeAppendNull();
      continue;
    }
    const int64_t day = FloorDiv(ints.Value(i), per_day);
    const int64_t rest = ints.Value(i) - day * per_day;  // in the column's unit
    days.UnsafeAppend(day);
    micros.UnsafeAppend(per_second >= kMicrosPerSecond ? rest / (per_second / kMicrosPerSecond)
                                                       : rest * (kMicrosPerSecond / per_second));
  }
  WallClock clock;
  ARROW_ASSIGN_OR_RAISE(auto day_array, days.Finish());
  ARROW_ASSIGN_OR_RAISE(auto micro_array, micros.Finish());
  clock.days = std::static_pointer_cast<arrow::Int64Array>(day_array);
  clock.micros_of_day = std::static_pointer_cast<arrow::Int64Array>(micro_array);
  return clock;
}

arrow::Result<std::shared_ptr<arrow::Array>> ToDate32(arrow::Int64Builder* days) {
  ARROW_ASSIGN_OR_RAISE(auto result, days->Finish());
  ARROW_ASSIGN_OR_RAISE(auto narrow, cp::Cast(result, arrow::int32()));
  return Reinterpret(narrow.make_array(), arrow::date32());
}

arrow::Status CheckArity(const std::string& name, const TypeVector& types, size_t expected) {
  if (types.size() != expected) {
    return arrow::Status::Invalid(name, " takes ", expected, " arguments, got ", types.size());
  }
  return arrow::Status::OK();
}

// ---------------------------------------------------------------------------------------------
// spark_make_date(year, month, day: integers) -> date32; null for an impossible date.
class MakeDate : public ScalarFunction {
 public:
  std::string name() const override { return "spark_make_date"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(CheckArity("make_date", types, 3));
    for (const auto& type : types) {
      if (!IsInteger(*type))
        return CannotApply("make_date", types, exprs, "year, month and day must be integers");
    }
    return arrow::date32();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    const int64_t n = ctx.num_rows;
    ARROW_ASSIGN_OR_RAISE(auto years, Column<arrow::Int64Array>(args[0], n, arrow::int64()));
    ARROW_ASSIGN_OR_RAISE(auto months, Column<arrow::Int64Array>(args[1], n, arrow::int64()));
    ARROW_ASSIGN_OR_RAISE(auto days, Column<arrow::Int64Array>(args[2], n, arrow::int64()));
    arrow::Int64Builder out;
    ARROW_RETURN_NOT_OK(out.Reserve(n));
    for (int64_t i = 0; i < n; ++i) {
      std::optional<int64_t> day;
      if (!years->IsNull(i) && !months->IsNull(i) && !days->IsNull(i)) {
        day = CheckedDaysFromCivil(years->Value(i), months->Value(i), days->Value(i));
      }
      if (day) {
        out.UnsafeAppend(*day);
      } else {
        out.UnsafeAppendNull();
      }
    }
    return ToDate32(&out);
  }
};

// spark_make_timestamp(year, month, day, hour, minute: integers, second: numeric) -> timestamp[us];
// null for an impossible combination (hour outside 0-23, minute outside 0-59, second outside
// [0, 60) except exactly 60). A fractional second is rounded to the nearest microsecond.
class MakeTimestamp : public ScalarFunction {
 public:
  std::string name() const override { return "spark_make_timestamp"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(CheckArity("make_timestamp", types, 6));
    for (size_t i = 0; i < 5; ++i) {
      if (!IsInteger(*types[i])) {
        return CannotApply("make_timestamp", types, exprs,
                           "year, month, day, hour and minute must be integers");
      }
    }
    if (!IsNumeric(*types[5])) return CannotApply("make_timestamp", types, exprs, "second must be numeric");
    return arrow::timestamp(arrow::TimeUnit::MICRO);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    const int64_t n = ctx.num_rows;
    std::vector<std::shared_ptr<arrow::Int64Array>> parts;
    for (size_t i = 0; i < 5; ++i) {
      ARROW_ASSIGN_OR_RAISE(auto part, Column<arrow::Int64Array>(args[i], n, arrow::int64()));
      parts.push_back(std::move(part));
    }
    ARROW_ASSIGN_OR_RAISE(auto seconds, Column<arrow::DoubleArray>(args[5], n, arrow::float64()));
    arrow::Int64Builder out;
    ARROW_RETURN_NOT_OK(out.Reserve(n));
    for (int64_t i = 0; i < n; ++i) {
      bool valid = !seconds->IsNull(i);
      for (const auto& part : parts) valid = valid && !part->IsNull(i);
      std::optional<int64_t> day;
      int64_t hour = 0, minute = 0;
      double micros = 0;
      if (valid) {
        day = CheckedDaysFromCivil(parts[0]->Value(i), parts[1]->Value(i), parts[2]->Value(i));
        hour = parts[3]->Value(i);
        minute = parts[4]->Value(i);
        micros = std::round(seconds->Value(i) * static_cast<double>(kMicrosPerSecond));
      }
      // Spark: second 60 with no fraction is the next minute's 0 (make_timestamp(2019, 6, 30, 23, 59,
      // 60) = 2019-07-01 00:00:00); anything else outside [0, 60) is invalid.
      const double minute_micros = 60.0 * kMicrosPerSecond;
      if (!day || hour < 0 || hour > 23 || minute < 0 || minute > 59 || !(micros >= 0) ||
          micros > minute_micros) {
        out.UnsafeAppendNull();
        continue;
      }
      const int64_t of_day = (hour * 3600 + minute * 60) * kMicrosPerSecond + static_cast<int64_t>(micros);
      int64_t value;
      if (__builtin_mul_overflow(*day, kSecondsPerDay * kMicrosPerSecond, &value) ||
          __builtin_add_overflow(value, of_day, &value)) {
        out.UnsafeAppendNull();
        continue;
      }
      out.UnsafeAppend(value);
    }
    ARROW_ASSIGN_OR_RAISE(auto result, out.Finish());
    return Reinterpret(result, arrow::timestamp(arrow::TimeUnit::MICRO));
  }
};

// spark_add_months(date|timestamp, months: integer) -> date32: the wall-clock date moved by
// `months`, the day clamped to the target month's length (Spark's dateAddMonths).
class AddMonthsColumn : public ScalarFunction {
 public:
  std::string name() const override { return "spark_add_months"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(CheckArity("add_months", types, 2));
    if (!IsDateOrTimestamp(*types[0]) || !IsInteger(*types[1])) {
      return CannotApply("add_months", types, exprs,
                         "expects a date or timestamp and an integer month count");
    }
    return arrow::date32();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    const int64_t n = ctx.num_rows;
    ARROW_ASSIGN_OR_RAISE(auto clock, ToWallClock(args[0], n));
    ARROW_ASSIGN_OR_RAISE(auto months, Column<arrow::Int64Array>(args[1], n, arrow::int64()));
    arrow::Int64Builder out;
    ARROW_RETURN_NOT_OK(out.Reserve(n));
    for (int64_t i = 0; i < n; ++i) {
      if (clock.days->IsNull(i) || months->IsNull(i)) {
        out.UnsafeAppendNull();
        continue;
      }
      const CivilDate date = CivilFromDays(clock.days->Value(i));
      int64_t total;
      if (__builtin_add_overflow(date.year * 12 + (date.month - 1), months->Value(i), &total)) {
        return arrow::Status::Invalid("add_months: month count ", months->Value(i), " overflows at row ",
                                      ctx.SourceRow(i));
      }
      out.UnsafeAppend(ShiftMonthsClamped(date, total));
    }
    ARROW_ASSIGN_OR_RAISE(auto result, out.Finish());
    auto narrow = cp::Cast(result, arrow::int32());
    if (!narrow.ok()) return arrow::Status::Invalid("add_months: a result is outside the date32 range");
    return Reinterpret(narrow->make_array(), arrow::date32());
  }
};

// spark_months_between(end, start: date|timestamp) -> float64, Spark's DateTimeUtils.monthsBetween
// with roundOff: whole months when the days of month match or both are month ends; otherwise
// months + (day and whole-second difference) / 31 days, rounded half up to 8 decimal places.
class MonthsBetween : public ScalarFunction {
 public:
  std::string name() const override { return "spark_months_between"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(CheckArity("months_between", types, 2));
    if (!IsDateOrTimestamp(*types[0]) || !IsDateOrTimestamp(*types[1])) {
      return CannotApply("months_between", types, exprs, "expects dates or timestamps");
    }
    return arrow::float64();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    const int64_t n = ctx.num_rows;
    ARROW_ASSIGN_OR_RAISE(auto end, ToWallClock(args[0], n));
    ARROW_ASSIGN_OR_RAISE(auto start, ToWallClock(args[1], n));
    arrow::DoubleBuilder out;
    ARROW_RETURN_NOT_OK(out.Reserve(n));
    for (int64_t i = 0; i < n; ++i) {
      if (end.days->IsNull(i) || start.days->IsNull(i)) {
        out.UnsafeAppendNull();
        continue;
      }
      const auto [y1, m1, d1] = CivilFromDays(end.days->Value(i));
      const auto [y2, m2, d2] = CivilFromDays(start.days->Value(i));
      const int64_t month_diff = (y1 - y2) * 12 + (m1 - m2);
      if (d1 == d2 || (d1 == DaysInMonth(y1, m1) && d2 == DaysInMonth(y2, m2))) {
        out.UnsafeAppend(static_cast<double>(month_diff));
        continue;
      }
      const int64_t seconds1 = end.micros_of_day->Value(i) / kMicrosPerSecond;
      const int64_t seconds2 = start.micros_of_day->Value(i) / kMicrosPerSecond;
      const int64_t seconds_diff = (d1 - d2) * kSecondsPerDay + seconds1 - seconds2;
      const double diff = static_cast<double>(month_diff) +
                          static_cast<double>(seconds_diff) / static_cast<double>(31 * kSecondsPerDay);
      // Java's BigDecimal(diff).setScale(8, HALF_UP): the double's exact value, halves away from
      // zero; long double keeps enough bits of diff * 1e8 to see which side of a half it is.
      const long double scaled = static_cast<long double>(diff) * 1e8L;
      out.UnsafeAppend(static_cast<double>(std::round(scaled) / 1e8L));
    }
    return out.Finish();
  }
};

// spark_to_utc_timestamp(timestamp; timezone) -> naive timestamp (same unit): the UTC instant of the
// wall clock read in `timezone`. A wall clock in a DST gap or overlap is an error (Daft's rule).
class ToUtcTimestamp : public ScalarFunction {
 public:
  std::string name() const override { return "spark_to_utc_timestamp"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(CheckArity("to_utc_timestamp", types, 1));
    if (types[0]->id() != arrow::Type::TIMESTAMP) {
      return CannotApply("to_utc_timestamp", types, exprs, "expects a timestamp");
    }
    ARROW_ASSIGN_OR_RAISE(auto zone, GetStringOption(options, "timezone", "to_utc_timestamp"));
    arrow::Int64Builder builder;
    ARROW_RETURN_NOT_OK(builder.Append(0));
    ARROW_ASSIGN_OR_RAISE(auto zero, builder.Finish());
    cp::AssumeTimezoneOptions assume(zone);
    if (!cp::CallFunction("assume_timezone", {Reinterpret(zero, arrow::timestamp(arrow::TimeUnit::SECOND))},
                          &assume)
             .ok()) {
      return arrow::Status::Invalid("to_utc_timestamp: unknown time zone '", zone, "'");
    }
    return arrow::timestamp(static_cast<const arrow::TimestampType&>(*types[0]).unit());
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto zone, GetStringOption(options, "timezone", "to_utc_timestamp"));
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    const auto unit = static_cast<const arrow::TimestampType&>(*input->type()).unit();
    if (!static_cast<const arrow::TimestampType&>(*input->type()).timezone().empty()) {
      ARROW_ASSIGN_OR_RAISE(auto local, cp::CallFunction("local_timestamp", {input}));
      input = local.make_array();
    }
    cp::AssumeTimezoneOptions assume(zone, cp::AssumeTimezoneOptions::AMBIGUOUS_RAISE,
                                     cp::AssumeTimezoneOptions::NONEXISTENT_RAISE);
    auto zoned = cp::CallFunction("assume_timezone", {input}, &assume);
    if (!zoned.ok()) {
      return arrow::Status::Invalid("to_utc_timestamp: a local time is ambiguous or does not exist in '",
                                    zone, "' (a DST transition): ", zoned.status().message());
    }
    return Reinterpret(zoned->make_array(), arrow::timestamp(unit));
  }
};

}  // namespace

arrow::Status RegisterSparkDateFunctions() {
  auto* registry = FunctionRegistry::Global();
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<MakeDate>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<MakeTimestamp>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<AddMonthsColumn>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<MonthsBetween>()));
  return registry->Register(std::make_shared<ToUtcTimestamp>());
}

}  // namespace ketch::temporal
