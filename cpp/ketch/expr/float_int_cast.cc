#include "ketch/expr/float_int_cast.h"

#include <cmath>
#include <limits>

namespace ketch {
namespace cp = arrow::compute;

bool IsFloatToIntegerCast(const arrow::DataType& from, const arrow::DataType& to) {
  return arrow::is_floating(from.id()) && arrow::is_integer(to.id());
}

namespace {

// [low, high): the integer parts the target holds, as exact doubles (2^63 and 2^64 are exact).
std::pair<double, double> Range(const arrow::DataType& to) {
  switch (to.id()) {
    case arrow::Type::INT8:
      return {-128.0, 128.0};
    case arrow::Type::INT16:
      return {-32768.0, 32768.0};
    case arrow::Type::INT32:
      return {-2147483648.0, 2147483648.0};
    case arrow::Type::UINT8:
      return {0.0, 256.0};
    case arrow::Type::UINT16:
      return {0.0, 65536.0};
    case arrow::Type::UINT32:
      return {0.0, 4294967296.0};
    case arrow::Type::UINT64:
      return {0.0, std::ldexp(1.0, 64)};
    default:  // INT64
      return {-std::ldexp(1.0, 63), std::ldexp(1.0, 63)};
  }
}

}  // namespace

arrow::Result<arrow::Datum> NullUnrepresentableFloats(const arrow::Datum& input, const arrow::DataType& to) {
  ARROW_ASSIGN_OR_RAISE(auto wide, cp::Cast(input, arrow::float64()));
  ARROW_ASSIGN_OR_RAISE(auto whole, cp::CallFunction("trunc", {wide}));
  const auto [low, high] = Range(to);
  ARROW_ASSIGN_OR_RAISE(auto finite, cp::CallFunction("is_finite", {wide}));
  ARROW_ASSIGN_OR_RAISE(
      auto above_low,
      cp::CallFunction("greater_equal", {whole, arrow::Datum(std::make_shared<arrow::DoubleScalar>(low))}));
  ARROW_ASSIGN_OR_RAISE(
      auto below_high,
      cp::CallFunction("less", {whole, arrow::Datum(std::make_shared<arrow::DoubleScalar>(high))}));
  ARROW_ASSIGN_OR_RAISE(auto in_range, cp::CallFunction("and_kleene", {above_low, below_high}));
  ARROW_ASSIGN_OR_RAISE(auto keep, cp::CallFunction("and_kleene", {finite, in_range}));
  // if_else(keep, input, null): a false or null `keep` gives null.
  const std::shared_ptr<arrow::Scalar> null_value = arrow::MakeNullScalar(input.type());
  return cp::CallFunction("if_else", {keep, input, arrow::Datum(null_value)});
}

}  // namespace ketch
