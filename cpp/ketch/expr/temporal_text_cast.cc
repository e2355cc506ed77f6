#include "ketch/expr/temporal_text_cast.h"

#include <string>
#include <string_view>

#include "ketch/expr/function_registry.h"

namespace ketch {
namespace cp = arrow::compute;

bool IsTemporalTextCast(const arrow::DataType& from, const arrow::DataType& to) {
  const bool text = to.id() == arrow::Type::STRING || to.id() == arrow::Type::LARGE_STRING;
  return text && (from.id() == arrow::Type::TIMESTAMP || from.id() == arrow::Type::DATE32);
}

namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }

arrow::Result<std::shared_ptr<arrow::Array>> Strftime(const std::shared_ptr<arrow::Array>& values,
                                                      const std::string& format) {
  cp::StrftimeOptions options(format, "C");
  ARROW_ASSIGN_OR_RAISE(auto datum, cp::CallFunction("strftime", {values}, &options));
  ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(datum, arrow::large_utf8()));
  return cast.make_array();
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Array>> TimestampText(const std::shared_ptr<arrow::Array>& input,
                                                           TimestampTextStyle style) {
  const bool rfc3339 = style == TimestampTextStyle::kRfc3339;
  const auto& type = static_cast<const arrow::TimestampType&>(*input->type());
  const int64_t per_second = TicksPerSecond(type.unit());
  const auto& ticks = static_cast<const arrow::TimestampArray&>(*input);
  // Whole seconds (floored, also before 1970), formatted by Arrow; the fraction added here.
  arrow::TimestampBuilder seconds_builder(arrow::timestamp(arrow::TimeUnit::SECOND, type.timezone()),
                                          arrow::default_memory_pool());
  ARROW_RETURN_NOT_OK(seconds_builder.Reserve(input->length()));
  for (int64_t i = 0; i < input->length(); ++i) {
    if (ticks.IsNull(i)) {
      seconds_builder.UnsafeAppendNull();
    } else {
      seconds_builder.UnsafeAppend(FloorDiv(ticks.Value(i), per_second));
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto seconds, seconds_builder.Finish());
  ARROW_ASSIGN_OR_RAISE(auto base, Strftime(seconds, rfc3339 ? "%Y-%m-%dT%H:%M:%S" : "%Y-%m-%d %H:%M:%S"));
  std::shared_ptr<arrow::Array> offsets, abbreviations;
  const std::string& zone = type.timezone();
  const bool fixed =
      !zone.empty() && (zone == "UTC" || zone == "Etc/UTC" || zone[0] == '+' || zone[0] == '-');
  if (!zone.empty()) {
    ARROW_ASSIGN_OR_RAISE(offsets, Strftime(seconds, "%z"));
    if (!fixed && !rfc3339) {
      ARROW_ASSIGN_OR_RAISE(abbreviations, Strftime(seconds, "%Z"));
    }
  }
  const auto& texts = static_cast<const arrow::LargeStringArray&>(*base);
  arrow::LargeStringBuilder out;
  ARROW_RETURN_NOT_OK(out.Reserve(input->length()));
  std::string text;
  for (int64_t i = 0; i < input->length(); ++i) {
    if (ticks.IsNull(i)) {
      ARROW_RETURN_NOT_OK(out.AppendNull());
      continue;
    }
    text.assign(texts.GetView(i));
    text += FractionText(ticks.Value(i), per_second);
    if (abbreviations) {
      text += " ";
      text.append(static_cast<const arrow::LargeStringArray&>(*abbreviations).GetView(i));
    } else if (offsets) {
      const std::string_view z = static_cast<const arrow::LargeStringArray&>(*offsets).GetView(i);
      if (rfc3339 && (z == "+0000" || z == "-0000")) {
        text += "Z";
        ARROW_RETURN_NOT_OK(out.Append(text));
        continue;
      }
      if (!rfc3339) text += " ";
      if (z.size() == 5) {
        text.append(z.substr(0, 3)).append(":").append(z.substr(3));
      } else {
        text.append(z);
      }
    }
    ARROW_RETURN_NOT_OK(out.Append(text));
  }
  return out.Finish();
}

namespace {

arrow::Result<std::shared_ptr<arrow::Array>> DateText(const std::shared_ptr<arrow::Array>& input) {
  ARROW_ASSIGN_OR_RAISE(auto years, cp::CallFunction("year", {input}));
  ARROW_ASSIGN_OR_RAISE(auto months, cp::CallFunction("month", {input}));
  ARROW_ASSIGN_OR_RAISE(auto days, cp::CallFunction("day", {input}));
  // Held: a reference into a temporary array would dangle.
  const std::shared_ptr<arrow::Array> year_array = years.make_array();
  const std::shared_ptr<arrow::Array> month_array = months.make_array();
  const std::shared_ptr<arrow::Array> day_array = days.make_array();
  const auto& y = static_cast<const arrow::Int64Array&>(*year_array);
  const auto& m = static_cast<const arrow::Int64Array&>(*month_array);
  const auto& d = static_cast<const arrow::Int64Array&>(*day_array);
  arrow::LargeStringBuilder out;
  ARROW_RETURN_NOT_OK(out.Reserve(input->length()));
  for (int64_t i = 0; i < input->length(); ++i) {
    if (input->IsNull(i)) {
      ARROW_RETURN_NOT_OK(out.AppendNull());
      continue;
    }
    ARROW_RETURN_NOT_OK(out.Append(std::to_string(y.Value(i)) + "-" + std::to_string(m.Value(i)) + "-" +
                                   std::to_string(d.Value(i))));
  }
  return out.Finish();
}

}  // namespace

int64_t TicksPerSecond(arrow::TimeUnit::type unit) {
  switch (unit) {
    case arrow::TimeUnit::SECOND:
      return 1;
    case arrow::TimeUnit::MILLI:
      return 1000;
    case arrow::TimeUnit::MICRO:
      return 1000000;
    case arrow::TimeUnit::NANO:
      return 1000000000;
  }
  return 1;
}

std::string FractionText(int64_t ticks, int64_t per_second) {
  int64_t fraction = ((ticks % per_second) + per_second) % per_second;
  if (fraction == 0) return "";
  int digits = per_second == 1000 ? 3 : per_second == 1000000 ? 6 : 9;
  while (digits > 3 && fraction % 1000 == 0) {
    fraction /= 1000;
    digits -= 3;
  }
  const std::string padded = std::to_string(fraction);
  return "." + std::string(digits - padded.size(), '0') + padded;
}

arrow::Result<arrow::Datum> CastTemporalToText(const arrow::Datum& input,
                                               const std::shared_ptr<arrow::DataType>& to) {
  const bool scalar = input.is_scalar();
  ARROW_ASSIGN_OR_RAISE(auto array, ToArray(input, 1));
  std::shared_ptr<arrow::Array> text;
  if (array->type_id() == arrow::Type::TIMESTAMP) {
    ARROW_ASSIGN_OR_RAISE(text, TimestampText(array, TimestampTextStyle::kDisplay));
  } else {
    ARROW_ASSIGN_OR_RAISE(text, DateText(array));
  }
  ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(text, to));
  if (scalar) {
    ARROW_ASSIGN_OR_RAISE(auto value, cast.make_array()->GetScalar(0));
    return arrow::Datum(value);
  }
  return cast;
}

}  // namespace ketch
