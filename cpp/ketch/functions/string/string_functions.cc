#include "ketch/functions/string/string_functions.h"

#include <arrow/compute/api.h>

#include <limits>

#include "ketch/functions/arrow_options_function.h"

namespace ketch::str {

arrow::Status RegisterFindFunction();
arrow::Status RegisterContainsFunction();
arrow::Status RegisterLengthFunction();
arrow::Status RegisterStringDistanceFunctions();
arrow::Status RegisterStringCaseFunctions();
arrow::Status RegisterStringMiscFunctions();
arrow::Status RegisterRegexFunctions();  // string_regex.cc

namespace {

namespace cp = arrow::compute;
using OptionsPtr = arrow::Result<std::shared_ptr<cp::FunctionOptions>>;

OptionsMaker MatchOptions(bool ignore_case) {
  return [ignore_case](const FunctionOptions& options, const std::string& function) -> OptionsPtr {
    ARROW_ASSIGN_OR_RAISE(auto pattern, GetStringOption(options, "pattern", function));
    ARROW_ASSIGN_OR_RAISE(auto ic, BoolOption(options, "ignore_case", ignore_case, function));
    return std::make_shared<cp::MatchSubstringOptions>(pattern, ic);
  };
}

OptionsPtr ReplaceOptions(const FunctionOptions& options, const std::string& function) {
  ARROW_ASSIGN_OR_RAISE(auto pattern, GetStringOption(options, "pattern", function));
  ARROW_ASSIGN_OR_RAISE(auto replacement, GetStringOption(options, "replacement", function));
  return std::make_shared<cp::ReplaceSubstringOptions>(pattern, replacement);
}

OptionsPtr SplitOptions(const FunctionOptions& options, const std::string& function) {
  ARROW_ASSIGN_OR_RAISE(auto pattern, GetStringOption(options, "pattern", function));
  if (pattern.empty()) return arrow::Status::Invalid(function, ": the split pattern must not be empty");
  return std::make_shared<cp::SplitPatternOptions>(pattern);
}

arrow::Result<int64_t> NonNegative(const FunctionOptions& options, const std::string& key,
                                   const std::string& function) {
  ARROW_ASSIGN_OR_RAISE(auto n, GetIntOption(options, key, function));
  if (n < 0) return arrow::Status::Invalid(function, ": ", key, " must be >= 0, got ", n);
  return n;
}

constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();

OptionsPtr LeftOptions(const FunctionOptions& options, const std::string& function) {
  ARROW_ASSIGN_OR_RAISE(auto n, NonNegative(options, "n", function));
  return std::make_shared<cp::SliceOptions>(0, n);
}

OptionsPtr RightOptions(const FunctionOptions& options, const std::string& function) {
  ARROW_ASSIGN_OR_RAISE(auto n, NonNegative(options, "n", function));
  if (n == 0) return std::make_shared<cp::SliceOptions>(0, 0);
  return std::make_shared<cp::SliceOptions>(-n, kToEnd);
}

OptionsPtr SubstrOptions(const FunctionOptions& options, const std::string& function) {
  ARROW_ASSIGN_OR_RAISE(auto start, NonNegative(options, "start", function));
  ARROW_ASSIGN_OR_RAISE(auto length, IntOption(options, "length", -1, function));
  if (length < -1) return arrow::Status::Invalid(function, ": length must be >= 0, got ", length);
  return std::make_shared<cp::SliceOptions>(start, length == -1 ? kToEnd : start + length);
}

OptionsPtr TruncateOptions(const FunctionOptions& options, const std::string& function) {
  ARROW_ASSIGN_OR_RAISE(auto n, NonNegative(options, "length", function));
  return std::make_shared<cp::SliceOptions>(0, n);
}

OptionsPtr PadOptions(const FunctionOptions& options, const std::string& function) {
  ARROW_ASSIGN_OR_RAISE(auto n, NonNegative(options, "length", function));
  ARROW_ASSIGN_OR_RAISE(auto pad, GetStringOption(options, "pad", function));
  int64_t code_points = 0;
  for (unsigned char c : pad) code_points += (c & 0xC0) != 0x80;
  if (code_points != 1) {
    return arrow::Status::Invalid(function, ": pad must be a single character, got '", pad, "'");
  }
  return std::make_shared<cp::PadOptions>(n, pad);
}

OptionsPtr StrptimeOptions(const FunctionOptions& options, const std::string& function,
                           arrow::TimeUnit::type unit) {
  ARROW_ASSIGN_OR_RAISE(auto format, GetStringOption(options, "format", function));
  return std::make_shared<cp::StrptimeOptions>(format, unit, /*error_is_null=*/false);
}

OptionsPtr StructFieldOptions(const FunctionOptions& options, const std::string& function) {
  ARROW_ASSIGN_OR_RAISE(auto field, GetStringOption(options, "field", function));
  return std::make_shared<cp::StructFieldOptions>(arrow::FieldRef(field));
}

ArrowOptionsSpec Simple(std::string name, std::string arrow_function,
                        std::shared_ptr<arrow::DataType> result_type = nullptr) {
  ArrowOptionsSpec spec;
  spec.name = std::move(name);
  spec.steps = {{std::move(arrow_function), nullptr}};
  spec.result_type = std::move(result_type);
  return spec;
}

ArrowOptionsSpec WithOptions(std::string name, std::vector<ArrowStep> steps, std::string pattern_option = "",
                             std::shared_ptr<arrow::DataType> result_type = nullptr) {
  ArrowOptionsSpec spec;
  spec.name = std::move(name);
  spec.steps = std::move(steps);
  spec.pattern_option = std::move(pattern_option);
  spec.result_type = std::move(result_type);
  return spec;
}

}  // namespace

arrow::Status RegisterStringFunctions() {
  std::vector<ArrowOptionsSpec> specs = {
      WithOptions("starts_with", {{"starts_with", MatchOptions(false)}}),
      WithOptions("ends_with", {{"ends_with", MatchOptions(false)}}),
      WithOptions("like", {{"match_like", MatchOptions(false)}}),
      WithOptions("ilike", {{"match_like", MatchOptions(true)}}),
      WithOptions("replace", {{"replace_substring", ReplaceOptions}}),
      WithOptions("split", {{"split_pattern", SplitOptions}}),
      WithOptions("regexp_split", {{"split_pattern_regex", SplitOptions}}, "pattern"),
      Simple("lower", "utf8_lower"),
      Simple("upper", "utf8_upper"),
      Simple("capitalize", "utf8_capitalize"),
      Simple("reverse", "utf8_reverse"),
      Simple("lstrip", "utf8_ltrim_whitespace"),
      Simple("rstrip", "utf8_rtrim_whitespace"),
      Simple("strip", "utf8_trim_whitespace"),
      Simple("length_bytes", "binary_length", arrow::uint64()),
      WithOptions("left", {{"utf8_slice_codeunits", LeftOptions}}),
      WithOptions("right", {{"utf8_slice_codeunits", RightOptions}}),
      WithOptions("substr", {{"utf8_slice_codeunits", SubstrOptions}}),
      WithOptions("lpad", {{"utf8_slice_codeunits", TruncateOptions}, {"utf8_lpad", PadOptions}}),
      WithOptions("rpad", {{"utf8_slice_codeunits", TruncateOptions}, {"utf8_rpad", PadOptions}}),
      WithOptions("normalize_nfd", {{"utf8_normalize",
                                     [](const FunctionOptions&, const std::string&) -> OptionsPtr {
                                       return std::make_shared<cp::Utf8NormalizeOptions>(
                                           cp::Utf8NormalizeOptions::NFD);
                                     }}}),
      WithOptions(
          "to_date",
          {{"strptime", [](const FunctionOptions& o,
                           const std::string& f) { return StrptimeOptions(o, f, arrow::TimeUnit::SECOND); }},
           {"cast",
            [](const FunctionOptions&, const std::string&) -> OptionsPtr {
              return std::make_shared<cp::CastOptions>(cp::CastOptions::Unsafe(arrow::date32()));
            }}}),
  };
  ArrowOptionsSpec to_datetime =
      WithOptions("to_datetime", {{"strptime", [](const FunctionOptions& o, const std::string& f) {
                                     return StrptimeOptions(o, f, arrow::TimeUnit::MICRO);
                                   }}});
  specs.push_back(to_datetime);
  ArrowOptionsSpec to_datetime_tz = to_datetime;
  to_datetime_tz.name = "to_datetime_tz";
  to_datetime_tz.steps.push_back(
      {"assume_timezone", [](const FunctionOptions& o, const std::string& f) -> OptionsPtr {
         ARROW_ASSIGN_OR_RAISE(auto tz, GetStringOption(o, "timezone", f));
         return std::make_shared<cp::AssumeTimezoneOptions>(tz);
       }});
  specs.push_back(to_datetime_tz);
  ArrowOptionsSpec struct_get = WithOptions("struct_get", {{"struct_field", StructFieldOptions}});
  struct_get.first_arg = ArgKind::kStruct;
  specs.push_back(struct_get);
  for (auto& spec : specs) ARROW_RETURN_NOT_OK(RegisterArrowOptionsFunction(std::move(spec)));
  ARROW_RETURN_NOT_OK(RegisterLengthFunction());
  ARROW_RETURN_NOT_OK(RegisterStringDistanceFunctions());
  ARROW_RETURN_NOT_OK(RegisterStringCaseFunctions());
  ARROW_RETURN_NOT_OK(RegisterStringMiscFunctions());
  ARROW_RETURN_NOT_OK(RegisterContainsFunction());
  ARROW_RETURN_NOT_OK(RegisterRegexFunctions());
  return RegisterFindFunction();
}

}  // namespace ketch::str
