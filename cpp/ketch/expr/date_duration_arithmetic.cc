#include "ketch/expr/date_duration_arithmetic.h"

#include <limits>

namespace ketch {

bool IsDateDurationArithmetic(const std::string& name,
                              const std::vector<std::shared_ptr<arrow::DataType>>& types) {
  if (types.size() != 2 || !types[0] || !types[1]) return false;
  const bool add = name == "add" || name == "add_checked";
  const bool subtract = name == "subtract" || name == "subtract_checked";
  const bool date_left = types[0]->id() == arrow::Type::DATE32 && types[1]->id() == arrow::Type::DURATION;
  const bool date_right = types[1]->id() == arrow::Type::DATE32 && types[0]->id() == arrow::Type::DURATION;
  return (add && (date_left || date_right)) || (subtract && date_left);
}

arrow::Result<arrow::Datum> DateDurationArithmetic(const std::string& name,
                                                   const std::vector<arrow::Datum>& args, int64_t num_rows) {
  const bool date_first = args[0].type()->id() == arrow::Type::DATE32;
  const arrow::Datum& date = date_first ? args[0] : args[1];
  const arrow::Datum& duration = date_first ? args[1] : args[0];
  auto as_array = [&](const arrow::Datum& d) -> arrow::Result<std::shared_ptr<arrow::Array>> {
    if (d.is_scalar()) return arrow::MakeArrayFromScalar(*d.scalar(), num_rows);
    return d.make_array();
  };
  ARROW_ASSIGN_OR_RAISE(auto dates, as_array(date));
  ARROW_ASSIGN_OR_RAISE(auto durations, as_array(duration));
  const auto unit = static_cast<const arrow::DurationType&>(*durations->type()).unit();
  const int64_t per_day = unit == arrow::TimeUnit::SECOND  ? 86400LL
                          : unit == arrow::TimeUnit::MILLI ? 86400LL * 1000
                          : unit == arrow::TimeUnit::MICRO ? 86400LL * 1000000
                                                           : 86400LL * 1000000000;
  const bool negate = name == "subtract" || name == "subtract_checked";
  const auto& d = static_cast<const arrow::Date32Array&>(*dates);
  const auto& t = static_cast<const arrow::DurationArray&>(*durations);
  arrow::Date32Builder out;
  ARROW_RETURN_NOT_OK(out.Reserve(d.length()));
  for (int64_t i = 0; i < d.length(); ++i) {
    if (d.IsNull(i) || t.IsNull(i)) {
      out.UnsafeAppendNull();
      continue;
    }
    const int64_t days = t.Value(i) / per_day;  // truncated toward zero
    const int64_t moved = d.Value(i) + (negate ? -days : days);
    if (moved < std::numeric_limits<int32_t>::min() || moved > std::numeric_limits<int32_t>::max()) {
      return arrow::Status::Invalid(name, ": date overflow");
    }
    out.UnsafeAppend(static_cast<int32_t>(moved));
  }
  ARROW_ASSIGN_OR_RAISE(auto result, out.Finish());
  return arrow::Datum(result);
}

}  // namespace ketch
