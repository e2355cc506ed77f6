// Case converters as Daft defines them: Daft calls the Rust `heck` crate (0.5), whose rules
// this file follows.
//
// Words: the input is split on every character that is not alphanumeric (Rust's
// `char::is_alphanumeric`: Alphabetic or a Nd/Nl/No number); separators are dropped and runs of
// them fold into one boundary. Inside a piece, a boundary falls
// - after a lowercase character followed by an uppercase one ("helloWorld" → hello|World), where
//   a character that is neither (a digit) keeps the case seen before it ("v2Api" → v2|Api);
// - before the last of two or more uppercase characters followed by a lowercase one
//   ("HTTPRequest" → HTTP|Request).
// Each word is then lowercased, uppercased or capitalized (first character uppercased, the rest
// lowercased) with Unicode's full case mappings ('ß' uppercases to "SS"; a final 'Σ' of a word
// lowercases to 'ς'), and the words are joined with the case's separator.

#include <arrow/api.h>

#include <functional>
#include <string>
#include <vector>

#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/string/string_args_internal.h"
#include "ketch/functions/string/string_functions.h"
#include "ketch/functions/string/unicode_internal.h"

namespace ketch::str {
namespace {

using unicode::AppendLower;
using unicode::AppendUpper;
using unicode::IsLowercase;
using unicode::IsUppercase;

constexpr char32_t kCapitalSigma = 0x03A3;
constexpr char32_t kFinalSigma = 0x03C2;

enum class WordCase { kLower, kUpper, kCapitalized };

void AppendLowerWord(const char32_t* begin, const char32_t* end, std::string* out) {
  for (const char32_t* p = begin; p != end; ++p) {
    if (*p == kCapitalSigma && p + 1 == end) {
      unicode::AppendUtf8(kFinalSigma, out);
    } else {
      AppendLower(*p, out);
    }
  }
}

void AppendWord(WordCase word_case, const char32_t* begin, const char32_t* end, std::string* out) {
  switch (word_case) {
    case WordCase::kLower:
      AppendLowerWord(begin, end, out);
      return;
    case WordCase::kUpper:
      for (const char32_t* p = begin; p != end; ++p) AppendUpper(*p, out);
      return;
    case WordCase::kCapitalized:
      if (begin == end) return;
      AppendUpper(*begin, out);
      AppendLowerWord(begin + 1, end, out);
      return;
  }
}

struct CaseStyle {
  WordCase first_word;
  WordCase other_words;
  std::string separator;
};

enum class Mode { kBoundary, kLower, kUpper };

/// Splits `cps` into words by heck's rules, calling `emit(begin, end)` for each in order.
template <typename Emit>
void ForEachWord(const std::vector<char32_t>& cps, Emit&& emit) {
  const char32_t* data = cps.data();
  const size_t n = cps.size();
  size_t piece_start = 0;
  while (piece_start < n) {
    size_t piece_end = piece_start;
    while (piece_end < n && unicode::IsAlphanumeric(data[piece_end])) ++piece_end;
    size_t init = piece_start;
    Mode mode = Mode::kBoundary;
    for (size_t i = piece_start; i < piece_end; ++i) {
      const char32_t c = data[i];
      if (i + 1 == piece_end) {
        emit(data + init, data + piece_end);
        break;
      }
      const char32_t next = data[i + 1];
      const Mode next_mode = IsLowercase(c) ? Mode::kLower : IsUppercase(c) ? Mode::kUpper : mode;
      if (next_mode == Mode::kLower && IsUppercase(next)) {
        emit(data + init, data + i + 1);
        init = i + 1;
        mode = Mode::kBoundary;
      } else if (mode == Mode::kUpper && IsUppercase(c) && IsLowercase(next)) {
        emit(data + init, data + i);
        init = i;
        mode = Mode::kBoundary;
      } else {
        mode = next_mode;
      }
    }
    piece_start = piece_end + 1;  // past the separator
  }
}

void ConvertCase(const CaseStyle& style, std::string_view input, std::vector<char32_t>* cps,
                 std::string* out) {
  out->clear();
  unicode::DecodeUtf8(input, cps);
  bool first = true;
  ForEachWord(*cps, [&](const char32_t* begin, const char32_t* end) {
    if (!first) out->append(style.separator);
    AppendWord(first ? style.first_word : style.other_words, begin, end, out);
    first = false;
  });
}

class CaseFunction : public ScalarFunction {
 public:
  CaseFunction(std::string name, CaseStyle style) : name_(std::move(name)), style_(std::move(style)) {}

  std::string name() const override { return name_; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(CheckStringArgs(name_, 1, arg_types, arg_exprs));
    return StringResultType(arg_types[0]);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, StringArg::Make(args[0]));
    const int64_t rows = RowsToCompute(args, ctx.num_rows);
    StringOutput output(StringResultType(args[0].type()));
    ARROW_RETURN_NOT_OK(output.Reserve(rows));
    std::vector<char32_t> cps;
    std::string converted;
    for (int64_t i = 0; i < rows; ++i) {
      if (input.IsNull(i)) {
        ARROW_RETURN_NOT_OK(output.AppendNull());
        continue;
      }
      ConvertCase(style_, input.Value(i), &cps, &converted);
      ARROW_RETURN_NOT_OK(output.Append(converted));
    }
    ARROW_ASSIGN_OR_RAISE(auto out, output.Finish());
    return FinishResult(args, out);
  }

 private:
  std::string name_;
  CaseStyle style_;
};

}  // namespace

arrow::Status RegisterStringCaseFunctions() {
  const std::vector<std::pair<std::string, CaseStyle>> styles = {
      {"to_camel_case", {WordCase::kLower, WordCase::kCapitalized, ""}},
      {"to_upper_camel_case", {WordCase::kCapitalized, WordCase::kCapitalized, ""}},
      {"to_snake_case", {WordCase::kLower, WordCase::kLower, "_"}},
      {"to_upper_snake_case", {WordCase::kUpper, WordCase::kUpper, "_"}},
      {"to_kebab_case", {WordCase::kLower, WordCase::kLower, "-"}},
      {"to_upper_kebab_case", {WordCase::kUpper, WordCase::kUpper, "-"}},
      {"to_title_case", {WordCase::kCapitalized, WordCase::kCapitalized, " "}},
  };
  for (const auto& [name, style] : styles) {
    ARROW_RETURN_NOT_OK(FunctionRegistry::Global()->Register(std::make_shared<CaseFunction>(name, style)));
  }
  return arrow::Status::OK();
}

}  // namespace ketch::str
