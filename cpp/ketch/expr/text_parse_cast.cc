#include "ketch/expr/text_parse_cast.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include "ketch/expr/function_registry.h"

namespace ketch {
namespace cp = arrow::compute;

namespace {
bool IsText(const arrow::DataType& type) {
  return type.id() == arrow::Type::STRING || type.id() == arrow::Type::LARGE_STRING ||
         type.id() == arrow::Type::STRING_VIEW;
}
}  // namespace

bool IsTextParseCast(const arrow::DataType& from, const arrow::DataType& to) {
  if (arrow::is_integer(from.id()) && arrow::is_integer(to.id())) return true;  // out of range: null
  const bool text = IsText(from);
  const bool parsed = arrow::is_integer(to.id()) || arrow::is_floating(to.id()) ||
                      to.id() == arrow::Type::BOOL || to.id() == arrow::Type::DATE32 ||
                      to.id() == arrow::Type::DATE64 || to.id() == arrow::Type::TIMESTAMP;
  return text && parsed;
}

namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

arrow::Result<arrow::Datum> ParseBooleans(const arrow::Array& trimmed) {
  ARROW_ASSIGN_OR_RAISE(auto text, cp::Cast(trimmed, arrow::large_utf8()));
  const auto& strings = static_cast<const arrow::LargeStringArray&>(*text);
  arrow::BooleanBuilder out;
  ARROW_RETURN_NOT_OK(out.Reserve(strings.length()));
  for (int64_t i = 0; i < strings.length(); ++i) {
    if (strings.IsNull(i)) {
      out.UnsafeAppendNull();
      continue;
    }
    const std::string word = Lower(strings.GetView(i));
    if (word == "true" || word == "t" || word == "yes" || word == "y" || word == "on" || word == "1") {
      out.UnsafeAppend(true);
    } else if (word == "false" || word == "f" || word == "no" || word == "n" || word == "off" ||
               word == "0") {
      out.UnsafeAppend(false);
    } else {
      out.UnsafeAppendNull();
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto array, out.Finish());
  return arrow::Datum(array);
}

}  // namespace

arrow::Result<arrow::Datum> CastTextLeniently(const arrow::Datum& input,
                                              const std::shared_ptr<arrow::DataType>& to,
                                              const cp::CastOptions& options) {
  const bool scalar = input.is_scalar();
  ARROW_ASSIGN_OR_RAISE(auto array, ToArray(input, 1));
  std::shared_ptr<arrow::Array> trimmed = array;
  if (IsText(*array->type())) {
    ARROW_ASSIGN_OR_RAISE(auto trimmed_datum, cp::CallFunction("utf8_trim_whitespace", {array}));
    trimmed = trimmed_datum.make_array();
  }
  arrow::Datum out;
  if (to->id() == arrow::Type::BOOL) {
    ARROW_ASSIGN_OR_RAISE(out, ParseBooleans(*trimmed));
  } else {
    cp::CastOptions strict = options;
    strict.to_type = to;
    auto whole = cp::Cast(trimmed, strict);
    if (whole.ok()) {
      out = *whole;
    } else {
      // Some value does not parse: one by one, null for those that fail.
      std::unique_ptr<arrow::ArrayBuilder> builder;
      ARROW_ASSIGN_OR_RAISE(builder, arrow::MakeBuilder(to));
      ARROW_RETURN_NOT_OK(builder->Reserve(trimmed->length()));
      for (int64_t i = 0; i < trimmed->length(); ++i) {
        auto one = cp::Cast(*trimmed->Slice(i, 1), strict);
        if (one.ok()) {
          ARROW_RETURN_NOT_OK(builder->AppendArraySlice(*one->make_array()->data(), 0, 1));
        } else {
          ARROW_RETURN_NOT_OK(builder->AppendNull());
        }
      }
      ARROW_ASSIGN_OR_RAISE(auto built, builder->Finish());
      out = arrow::Datum(built);
    }
  }
  if (scalar) {
    ARROW_ASSIGN_OR_RAISE(auto value, out.make_array()->GetScalar(0));
    return arrow::Datum(value);
  }
  return out;
}

}  // namespace ketch
