#include "ketch/expr/float_text_cast.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace ketch {
namespace {

template <typename T>
std::string Format(T value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  // The shortest round-trip digits, as "d.ddde±XX" (std::to_chars without a precision).
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  if (ec != std::errc()) return std::to_string(value);
  std::string_view text(buf, end - buf);
  std::string out;
  if (text.front() == '-') {
    out.push_back('-');
    text.remove_prefix(1);
  }
  const size_t e_at = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e_at)) {
    if (c != '.') digits.push_back(c);
  }
  const int exponent = std::atoi(std::string(text.substr(e_at + 1)).c_str());
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  if (exponent < -5 || exponent >= 16) {
    out.push_back(digits[0]);
    if (digits.size() > 1) out.append(".").append(digits, 1);
    out.append("e").append(std::to_string(exponent));
    return out;
  }
  if (exponent < 0) {
    out.append("0.").append(static_cast<size_t>(-exponent - 1), '0').append(digits);
    return out;
  }
  const auto integer_digits = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= integer_digits) {
    out.append(digits).append(integer_digits - digits.size(), '0').append(".0");
  } else {
    out.append(digits, 0, integer_digits).append(".").append(digits, integer_digits);
  }
  return out;
}

template <typename ArrayType, typename Builder>
arrow::Status AppendAll(const ArrayType& values, Builder* builder) {
  ARROW_RETURN_NOT_OK(builder->Reserve(values.length()));
  for (int64_t i = 0; i < values.length(); ++i) {
    if (values.IsNull(i)) {
      ARROW_RETURN_NOT_OK(builder->AppendNull());
    } else {
      ARROW_RETURN_NOT_OK(builder->Append(Format(values.Value(i))));
    }
  }
  return arrow::Status::OK();
}

template <typename Builder>
arrow::Result<std::shared_ptr<arrow::Array>> CastArray(const arrow::Array& input) {
  Builder builder;
  if (input.type_id() == arrow::Type::FLOAT) {
    ARROW_RETURN_NOT_OK(AppendAll(static_cast<const arrow::FloatArray&>(input), &builder));
  } else {
    ARROW_RETURN_NOT_OK(AppendAll(static_cast<const arrow::DoubleArray&>(input), &builder));
  }
  return builder.Finish();
}

}  // namespace

std::string FloatText(double value) { return Format(value); }
std::string FloatText(float value) { return Format(value); }

bool IsFloatTextCast(const arrow::DataType& from, const arrow::DataType& to) {
  return (from.id() == arrow::Type::FLOAT || from.id() == arrow::Type::DOUBLE) &&
         (to.id() == arrow::Type::STRING || to.id() == arrow::Type::LARGE_STRING);
}

arrow::Result<arrow::Datum> CastFloatToText(const arrow::Datum& input,
                                            const std::shared_ptr<arrow::DataType>& to) {
  if (input.is_scalar()) {
    const auto& scalar = *input.scalar();
    if (!scalar.is_valid) return arrow::Datum(arrow::MakeNullScalar(to));
    const std::string text = scalar.type->id() == arrow::Type::FLOAT
                                 ? Format(static_cast<const arrow::FloatScalar&>(scalar).value)
                                 : Format(static_cast<const arrow::DoubleScalar&>(scalar).value);
    return arrow::MakeScalar(to, text);
  }
  if (!input.is_array()) return arrow::Status::TypeError("float → text cast: expected an array or a scalar");
  const auto array = input.make_array();
  if (to->id() == arrow::Type::LARGE_STRING) return CastArray<arrow::LargeStringBuilder>(*array);
  return CastArray<arrow::StringBuilder>(*array);
}

}  // namespace ketch
