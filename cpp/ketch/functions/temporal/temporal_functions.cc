// Temporal kernels over int64 time values. Zoned timestamps are handled by converting to local wall
// time (Arrow's local_timestamp), working on that, and converting back with assume_timezone (see
// AssumeZone for DST gaps and overlaps), so day boundaries follow the zone's calendar.
#include "ketch/functions/temporal/temporal_functions.h"

#include <arrow/compute/api.h>

#include <optional>
#include <string_view>

#include "ketch/expr/function_registry.h"
#include "ketch/expr/temporal_text_cast.h"
#include "ketch/functions/temporal/civil_date.h"
#include "ketch/functions/temporal/strftime_fast.h"

namespace ketch::temporal {
namespace {

using TypeVector = std::vector<std::shared_ptr<arrow::DataType>>;
namespace cp = arrow::compute;

arrow::Result<arrow::TimeUnit::type> ParseUnit(const std::string& unit, const std::string& label) {
  if (unit == "s") return arrow::TimeUnit::SECOND;
  if (unit == "ms") return arrow::TimeUnit::MILLI;
  if (unit == "us") return arrow::TimeUnit::MICRO;
  if (unit == "ns") return arrow::TimeUnit::NANO;
  return arrow::Status::Invalid(label, ": unknown time unit '", unit, "' (one of s, ms, us, ns)");
}

bool IsTimestamp(const arrow::DataType& type) { return type.id() == arrow::Type::TIMESTAMP; }
bool IsDate(const arrow::DataType& type) {
  return type.id() == arrow::Type::DATE32 || type.id() == arrow::Type::DATE64;
}
const std::string& ZoneOf(const arrow::DataType& type) {
  return static_cast<const arrow::TimestampType&>(type).timezone();
}
arrow::TimeUnit::type UnitOf(const arrow::DataType& type) {
  return static_cast<const arrow::TimestampType&>(type).unit();
}

arrow::Status WrongType(const std::string& label, const std::string& expected, const ExprPtr& expr,
                        const arrow::DataType& type) {
  return arrow::Status::TypeError(label, " expects ", expected, ", but ", expr->ToString(), " has type ",
                                  type.ToString());
}

// The same buffers under another type of the same width (int64 <-> timestamp/duration/time64).
std::shared_ptr<arrow::Array> Reinterpret(const std::shared_ptr<arrow::Array>& array,
                                          std::shared_ptr<arrow::DataType> type) {
  auto data = array->data()->Copy();
  data->type = std::move(type);
  return arrow::MakeArray(data);
}

arrow::Result<std::shared_ptr<arrow::Array>> AssumeZone(const std::shared_ptr<arrow::Array>& naive,
                                                        const std::string& zone) {
  // An ambiguous local time (the repeated hour when clocks fall back) takes its first instant; a
  // nonexistent one (skipped when clocks spring forward) moves to the end of the gap (03:00 for
  // 02:30 in New York), as pandas' shift_forward.
  cp::AssumeTimezoneOptions options(zone, cp::AssumeTimezoneOptions::AMBIGUOUS_EARLIEST,
                                    cp::AssumeTimezoneOptions::NONEXISTENT_LATEST);
  ARROW_ASSIGN_OR_RAISE(auto result, cp::CallFunction("assume_timezone", {naive}, &options));
  return result.make_array();
}

arrow::Status ValidateZone(const std::string& zone, const std::string& label) {
  arrow::Int64Builder builder;
  ARROW_RETURN_NOT_OK(builder.Append(0));
  ARROW_ASSIGN_OR_RAISE(auto zero, builder.Finish());
  auto status = AssumeZone(Reinterpret(zero, arrow::timestamp(arrow::TimeUnit::SECOND)), zone).status();
  if (!status.ok()) return arrow::Status::Invalid(label, ": unknown time zone '", zone, "'");
  return arrow::Status::OK();
}

// Naive wall-clock timestamps: zoned input converted to local time, naive input as is.
arrow::Result<std::shared_ptr<arrow::Array>> WallClock(const std::shared_ptr<arrow::Array>& ts) {
  if (ZoneOf(*ts->type()).empty()) return ts;
  ARROW_ASSIGN_OR_RAISE(auto local, cp::CallFunction("local_timestamp", {ts}));
  return local.make_array();
}

// Applies `fn` to every non-null int64 value of a fixed-width temporal array; result typed `out_type`.
template <typename Fn>
arrow::Result<std::shared_ptr<arrow::Array>> MapInt64(const std::shared_ptr<arrow::Array>& input,
                                                      std::shared_ptr<arrow::DataType> out_type, Fn&& fn) {
  ARROW_ASSIGN_OR_RAISE(auto as_int, cp::Cast(Reinterpret(input, arrow::int64()), arrow::int64()));
  const auto values_holder = as_int.make_array();  // the Array must outlive `values`
  const auto& values = static_cast<const arrow::Int64Array&>(*values_holder);
  arrow::Int64Builder out;
  ARROW_RETURN_NOT_OK(out.Reserve(values.length()));
  for (int64_t i = 0; i < values.length(); ++i) {
    if (values.IsNull(i)) {
      out.UnsafeAppendNull();
    } else {
      ARROW_ASSIGN_OR_RAISE(int64_t v, fn(values.Value(i), i));
      out.UnsafeAppend(v);
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto result, out.Finish());
  if (out_type->id() == arrow::Type::INT64) return result;
  if (out_type->byte_width() == 4) {
    ARROW_ASSIGN_OR_RAISE(auto narrowed, cp::Cast(result, arrow::int32()));
    return Reinterpret(narrowed.make_array(), std::move(out_type));
  }
  return Reinterpret(result, std::move(out_type));
}

// Days since the epoch of a date32/date64/naive timestamp array, as int64 per value.
arrow::Result<std::shared_ptr<arrow::Array>> EpochNanos(const std::shared_ptr<arrow::Array>& input) {
  switch (input->type_id()) {
    case arrow::Type::DATE32: {
      ARROW_ASSIGN_OR_RAISE(auto days, cp::Cast(input, arrow::int32()));
      ARROW_ASSIGN_OR_RAISE(auto wide, cp::Cast(days, arrow::int64()));
      return MapInt64(wide.make_array(), arrow::int64(),
                      [](int64_t d, int64_t) -> arrow::Result<int64_t> { return d * kNanosPerDay; });
    }
    case arrow::Type::DATE64:
      return MapInt64(input, arrow::int64(),
                      [](int64_t ms, int64_t) -> arrow::Result<int64_t> { return ms * 1'000'000LL; });
    default: {
      const int64_t per = NanosPerUnit(UnitOf(*input->type()));
      return MapInt64(input, arrow::int64(), [per](int64_t v, int64_t) -> arrow::Result<int64_t> {
        int64_t out;
        if (__builtin_mul_overflow(v, per, &out)) {
          return arrow::Status::Invalid("timestamp ", v, " overflows int64 nanoseconds");
        }
        return out;
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// strftime with chrono's format language (Daft's): Arrow's %S prints the fraction of the column's
// unit, so "%S" alone is served by flooring to seconds and "%S%.3f" by flooring to milliseconds.
struct ArrowFormat {
  std::string format;
  std::optional<arrow::TimeUnit::type> unit;  // floor to this unit first; nullopt: keep the column's
};

arrow::Result<ArrowFormat> TranslateFormat(const std::string& chrono) {
  static constexpr std::string_view kAllowed = "aAbBcCdDeFgGhHIjmMnpRStTuUVwWxXyYzZ%";
  ArrowFormat out;
  bool has_seconds = false;
  bool has_fraction = false;
  for (size_t i = 0; i < chrono.size(); ++i) {
    if (chrono[i] != '%') {
      out.format += chrono[i];
      continue;
    }
    if (i + 1 >= chrono.size()) {
      return arrow::Status::Invalid("strftime: invalid format '", chrono, "': it ends with a lone '%'");
    }
    const char c = chrono[i + 1];
    if (c == '.') {
      // %.f, %.3f, %.6f, %.9f: the fraction of the preceding %S.
      size_t j = i + 2;
      char digits = 0;
      if (j < chrono.size() && (chrono[j] == '3' || chrono[j] == '6' || chrono[j] == '9'))
        digits = chrono[j++];
      if (j >= chrono.size() || chrono[j] != 'f' || !has_seconds || out.format.size() < 2 ||
          out.format.compare(out.format.size() - 2, 2, "%S") != 0) {
        return arrow::Status::Invalid("strftime: unsupported format '", chrono,
                                      "': a fraction (%.f, %.3f, %.6f, %.9f) must follow %S");
      }
      has_fraction = true;
      if (digits == '3') out.unit = arrow::TimeUnit::MILLI;
      if (digits == '6') out.unit = arrow::TimeUnit::MICRO;
      if (digits == '9') out.unit = arrow::TimeUnit::NANO;
      i = j;
      continue;
    }
    if (kAllowed.find(c) == std::string_view::npos) {
      return arrow::Status::Invalid("strftime: unsupported specifier '%", std::string(1, c), "' in format '",
                                    chrono, "'");
    }
    if (c == 'S' || c == 'T' || c == 'c' || c == 'X') has_seconds = true;
    out.format += '%';
    out.format += c;
    ++i;
  }
  if (has_seconds && !has_fraction) out.unit = arrow::TimeUnit::SECOND;
  return out;
}

// A timestamp array floored to `unit` (never finer than it is).
arrow::Result<std::shared_ptr<arrow::Array>> FloorToUnit(const std::shared_ptr<arrow::Array>& ts,
                                                         arrow::TimeUnit::type unit) {
  const auto from = UnitOf(*ts->type());
  const int64_t from_ns = NanosPerUnit(from);
  const int64_t to_ns = NanosPerUnit(unit);
  auto type = arrow::timestamp(unit, ZoneOf(*ts->type()));
  if (to_ns <= from_ns) {
    const int64_t factor = from_ns / to_ns;
    return MapInt64(ts, type, [factor](int64_t v, int64_t) -> arrow::Result<int64_t> {
      int64_t out;
      if (__builtin_mul_overflow(v, factor, &out)) return arrow::Status::Invalid("timestamp overflows");
      return out;
    });
  }
  const int64_t factor = to_ns / from_ns;
  return MapInt64(ts, type,
                  [factor](int64_t v, int64_t) -> arrow::Result<int64_t> { return FloorDiv(v, factor); });
}

// Daft's default text of a timestamp (chrono's RFC 3339 form with automatic fraction digits):
// "2024-01-02T03:04:05", then ".120" / ".000100" / ".000000123" only where the value has a
// fraction (the fewest of 3, 6 or 9 digits that hold it exactly), then for a zoned type "Z" at
// offset zero or "-05:00".
arrow::Result<arrow::Datum> DefaultTimestampText(const std::shared_ptr<arrow::Array>& input) {
  ARROW_ASSIGN_OR_RAISE(auto text, TimestampText(input, TimestampTextStyle::kRfc3339));
  return arrow::Datum(text);
}

class Strftime : public ScalarFunction {
 public:
  std::string name() const override { return "dt_strftime"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions& options) const override {
    if (types.size() != 1 || !(IsTimestamp(*types[0]) || IsDate(*types[0]))) {
      return WrongType("dt.strftime", "a timestamp or date", exprs[0], *types[0]);
    }
    if (HasOption(options, "format")) {
      ARROW_ASSIGN_OR_RAISE(auto format, GetStringOption(options, "format", "dt.strftime"));
      ARROW_RETURN_NOT_OK(TranslateFormat(format).status());
    }
    return arrow::large_utf8();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    std::string chrono;
    if (HasOption(options, "format")) {
      ARROW_ASSIGN_OR_RAISE(chrono, GetStringOption(options, "format", "dt.strftime"));
    }
    if (chrono.empty() && IsTimestamp(*input->type())) return DefaultTimestampText(input);
    if (input->type_id() != arrow::Type::DATE64) {
      const std::string fast_format = chrono.empty() && IsDate(*input->type()) ? "%Y-%m-%d" : chrono;
      if (!fast_format.empty()) {
        ARROW_ASSIGN_OR_RAISE(auto fast, FastStrftime(*input, fast_format));
        if (fast) return fast;
      }
    }
    std::shared_ptr<arrow::Array> ts = input;
    ArrowFormat format;
    if (IsDate(*input->type())) {
      ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(input, arrow::timestamp(arrow::TimeUnit::SECOND)));
      ts = cast.make_array();
      if (chrono.empty()) chrono = "%Y-%m-%d";
      ARROW_ASSIGN_OR_RAISE(format, TranslateFormat(chrono));
    } else {
      ARROW_ASSIGN_OR_RAISE(format, TranslateFormat(chrono));
    }
    if (format.unit && *format.unit != UnitOf(*ts->type())) {
      ARROW_ASSIGN_OR_RAISE(ts, FloorToUnit(ts, *format.unit));
    }
    cp::StrftimeOptions strftime_options(format.format, "C");
    ARROW_ASSIGN_OR_RAISE(auto result, cp::CallFunction("strftime", {ts}, &strftime_options));
    return cp::Cast(result, arrow::large_utf8());
  }
};

// ---------------------------------------------------------------------------------------------
class DateOf : public ScalarFunction {
 public:
  std::string name() const override { return "dt_date"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    if (types.size() != 1 || !(IsTimestamp(*types[0]) || IsDate(*types[0]))) {
      return WrongType("dt.date", "a timestamp or date", exprs[0], *types[0]);
    }
    return arrow::date32();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    if (IsDate(*input->type())) return cp::Cast(input, arrow::date32());
    ARROW_ASSIGN_OR_RAISE(auto wall, WallClock(input));
    const int64_t per_day = kNanosPerDay / NanosPerUnit(UnitOf(*wall->type()));
    return MapInt64(wall, arrow::date32(),
                    [per_day](int64_t v, int64_t) -> arrow::Result<int64_t> { return FloorDiv(v, per_day); });
  }
};

class TimeOf : public ScalarFunction {
 public:
  std::string name() const override { return "dt_time"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    if (types.size() != 1 || !IsTimestamp(*types[0]))
      return WrongType("dt.time", "a timestamp", exprs[0], *types[0]);
    return TimeType(UnitOf(*types[0]));
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto wall, WallClock(input));
    const auto unit = UnitOf(*wall->type());
    const int64_t per_day = kNanosPerDay / NanosPerUnit(unit);
    return MapInt64(wall, TimeType(unit), [per_day](int64_t v, int64_t) -> arrow::Result<int64_t> {
      return v - FloorDiv(v, per_day) * per_day;
    });
  }

 private:
  static std::shared_ptr<arrow::DataType> TimeType(arrow::TimeUnit::type unit) {
    if (unit == arrow::TimeUnit::SECOND || unit == arrow::TimeUnit::MILLI) return arrow::time32(unit);
    return arrow::time64(unit);
  }
};

// ---------------------------------------------------------------------------------------------
class Truncate : public ScalarFunction {
 public:
  std::string name() const override { return "dt_truncate"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions& options) const override {
    if (types.empty() || types.size() > 2 || !IsTimestamp(*types[0])) {
      return WrongType("dt.truncate", "a timestamp", exprs[0], *types[0]);
    }
    if (types.size() == 2 && types[1]->id() != arrow::Type::NA && !IsTimestamp(*types[1])) {
      return WrongType("dt.truncate relative_to", "a timestamp", exprs[1], *types[1]);
    }
    ARROW_RETURN_NOT_OK(Step(options, *types[0]).status());
    return types[0];
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(const int64_t step, Step(options, *input->type()));
    ARROW_ASSIGN_OR_RAISE(auto wall, WallClock(input));
    std::shared_ptr<arrow::Int64Array> origin;
    if (args.size() == 2 && args[1].type() && args[1].type()->id() != arrow::Type::NA) {
      ARROW_ASSIGN_OR_RAISE(auto relative, ToArray(args[1], ctx.num_rows));
      ARROW_ASSIGN_OR_RAISE(auto relative_wall, WallClock(relative));
      ARROW_ASSIGN_OR_RAISE(auto relative_unit,
                            cp::Cast(relative_wall, arrow::timestamp(UnitOf(*wall->type())),
                                     cp::CastOptions::Unsafe(arrow::timestamp(UnitOf(*wall->type())))));
      origin = std::static_pointer_cast<arrow::Int64Array>(
          Reinterpret(relative_unit.make_array(), arrow::int64()));
    }
    ARROW_ASSIGN_OR_RAISE(auto floored,
                          MapInt64(wall, wall->type(), [&](int64_t v, int64_t i) -> arrow::Result<int64_t> {
                            const int64_t o = (origin && origin->IsValid(i)) ? origin->Value(i) : 0;
                            return o + FloorDiv(v - o, step) * step;
                          }));
    const auto& zone = ZoneOf(*input->type());
    if (zone.empty()) return floored;
    return AssumeZone(floored, zone);
  }

 private:
  static arrow::Result<int64_t> Step(const FunctionOptions& options, const arrow::DataType& type) {
    ARROW_ASSIGN_OR_RAISE(const int64_t step_ns, GetIntOption(options, "step_ns", "dt.truncate"));
    std::string interval = std::to_string(step_ns) + " nanoseconds";
    if (HasOption(options, "interval")) {
      ARROW_ASSIGN_OR_RAISE(interval, GetStringOption(options, "interval", "dt.truncate"));
    }
    const int64_t per = NanosPerUnit(UnitOf(type));
    if (step_ns <= 0 || step_ns % per != 0) {
      return arrow::Status::Invalid("dt.truncate: interval '", interval,
                                    "' is not a positive whole number of ", "the column's unit (",
                                    type.ToString(), ")");
    }
    return step_ns / per;
  }
};

// ---------------------------------------------------------------------------------------------
class ReplaceTimeZone : public ScalarFunction {
 public:
  std::string name() const override { return "dt_replace_time_zone"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions& options) const override {
    if (types.size() != 1 || !IsTimestamp(*types[0])) {
      return WrongType("dt.replace_time_zone", "a timestamp", exprs[0], *types[0]);
    }
    std::string zone;
    if (HasOption(options, "timezone")) {
      ARROW_ASSIGN_OR_RAISE(zone, GetStringOption(options, "timezone", "dt.replace_time_zone"));
      ARROW_RETURN_NOT_OK(ValidateZone(zone, "dt.replace_time_zone"));
    }
    return arrow::timestamp(UnitOf(*types[0]), zone);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto wall, WallClock(input));
    if (!HasOption(options, "timezone")) return wall;
    ARROW_ASSIGN_OR_RAISE(auto zone, GetStringOption(options, "timezone", "dt.replace_time_zone"));
    return AssumeZone(wall, zone);
  }
};

class ConvertTimeZone : public ScalarFunction {
 public:
  std::string name() const override { return "dt_convert_time_zone"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions& options) const override {
    if (types.size() != 1 || !IsTimestamp(*types[0])) {
      return WrongType("dt.convert_time_zone", "a timestamp", exprs[0], *types[0]);
    }
    ARROW_ASSIGN_OR_RAISE(auto to, GetStringOption(options, "to_timezone", "dt.convert_time_zone"));
    ARROW_RETURN_NOT_OK(ValidateZone(to, "dt.convert_time_zone"));
    if (HasOption(options, "from_timezone")) {
      ARROW_ASSIGN_OR_RAISE(auto from, GetStringOption(options, "from_timezone", "dt.convert_time_zone"));
      ARROW_RETURN_NOT_OK(ValidateZone(from, "dt.convert_time_zone"));
    } else if (ZoneOf(*types[0]).empty()) {
      return arrow::Status::Invalid(
          "dt.convert_time_zone: ", exprs[0]->ToString(),
          " has no time zone; pass from_timezone to say which zone its values are in");
    }
    return arrow::timestamp(UnitOf(*types[0]), to);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto to, GetStringOption(options, "to_timezone", "dt.convert_time_zone"));
    std::shared_ptr<arrow::Array> zoned = input;
    if (ZoneOf(*input->type()).empty()) {
      ARROW_ASSIGN_OR_RAISE(auto from, GetStringOption(options, "from_timezone", "dt.convert_time_zone"));
      ARROW_ASSIGN_OR_RAISE(zoned, AssumeZone(input, from));
    }
    // The stored values are UTC instants whatever the zone: converting only changes the type.
    return Reinterpret(zoned, arrow::timestamp(UnitOf(*input->type()), to));
  }
};

// ---------------------------------------------------------------------------------------------
class ToUnixEpoch : public ScalarFunction {
 public:
  std::string name() const override { return "dt_to_unix_epoch"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions& options) const override {
    if (types.size() != 1 || !(IsTimestamp(*types[0]) || IsDate(*types[0]))) {
      return WrongType("dt.to_unix_epoch", "a timestamp or date", exprs[0], *types[0]);
    }
    ARROW_ASSIGN_OR_RAISE(auto unit, GetStringOption(options, "unit", "dt.to_unix_epoch"));
    ARROW_RETURN_NOT_OK(ParseUnit(unit, "dt.to_unix_epoch").status());
    return arrow::int64();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto unit_name, GetStringOption(options, "unit", "dt.to_unix_epoch"));
    ARROW_ASSIGN_OR_RAISE(auto unit, ParseUnit(unit_name, "dt.to_unix_epoch"));
    const int64_t per = NanosPerUnit(unit);
    if (IsTimestamp(*input->type())) {
      // Exact integer arithmetic without going through nanoseconds (which overflow past 2262).
      const int64_t from = NanosPerUnit(UnitOf(*input->type()));
      return MapInt64(input, arrow::int64(), [from, per](int64_t v, int64_t) -> arrow::Result<int64_t> {
        if (from >= per) {
          int64_t out;
          if (__builtin_mul_overflow(v, from / per, &out))
            return arrow::Status::Invalid("to_unix_epoch overflows");
          return out;
        }
        return FloorDiv(v, per / from);
      });
    }
    ARROW_ASSIGN_OR_RAISE(auto nanos, EpochNanos(input));
    return MapInt64(nanos, arrow::int64(),
                    [per](int64_t v, int64_t) -> arrow::Result<int64_t> { return FloorDiv(v, per); });
  }
};

class DurationTotal : public ScalarFunction {
 public:
  std::string name() const override { return "dt_total"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions& options) const override {
    if (types.size() != 1 || types[0]->id() != arrow::Type::DURATION) {
      return WrongType("dt.total", "a duration", exprs[0], *types[0]);
    }
    ARROW_RETURN_NOT_OK(TargetNanos(options).status());
    return arrow::int64();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(const int64_t target, TargetNanos(options));
    const int64_t from = NanosPerUnit(static_cast<const arrow::DurationType&>(*input->type()).unit());
    return MapInt64(input, arrow::int64(), [from, target](int64_t v, int64_t) -> arrow::Result<int64_t> {
      if (from >= target) {
        int64_t out;
        if (__builtin_mul_overflow(v, from / target, &out))
          return arrow::Status::Invalid("duration total overflows");
        return out;
      }
      return v / (target / from);  // truncates toward zero, as Daft
    });
  }

 private:
  static arrow::Result<int64_t> TargetNanos(const FunctionOptions& options) {
    ARROW_ASSIGN_OR_RAISE(auto unit, GetStringOption(options, "unit", "dt.total"));
    if (unit == "min") return 60'000'000'000LL;
    if (unit == "h") return 3'600'000'000'000LL;
    if (unit == "d") return kNanosPerDay;
    ARROW_ASSIGN_OR_RAISE(auto time_unit, ParseUnit(unit, "dt.total"));
    return NanosPerUnit(time_unit);
  }
};

}  // namespace

arrow::Status RegisterTemporalFunctions() {
  auto* registry = FunctionRegistry::Global();
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<Strftime>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<DateOf>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<TimeOf>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<Truncate>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ReplaceTimeZone>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ConvertTimeZone>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ToUnixEpoch>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<DurationTotal>()));
  ARROW_RETURN_NOT_OK(RegisterSparkDateFunctions());
  ARROW_RETURN_NOT_OK(RegisterCurrentTimeFunctions());
  return RegisterIntervalArithmetic();
}

int64_t NanosPerUnit(arrow::TimeUnit::type unit) {
  switch (unit) {
    case arrow::TimeUnit::SECOND:
      return 1'000'000'000LL;
    case arrow::TimeUnit::MILLI:
      return 1'000'000LL;
    case arrow::TimeUnit::MICRO:
      return 1'000LL;
    default:
      return 1LL;
  }
}

}  // namespace ketch::temporal
