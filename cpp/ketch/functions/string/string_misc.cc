// Spark-compatible string functions as Daft defines them:
// - soundex(s): American Soundex (first letter, then the digits of the consonants, same-coded
//   neighbours once, H and W transparent, vowels and non-letters separating; cut or zero-padded
//   to 4). A string not starting with an ASCII letter comes back unchanged; "" gives "".
// - ascii(s) → int32: the first UTF-8 byte as a signed byte (Spark: ascii('é') = -61); 0 for "".
// - chr(n) → string: the Latin-1 character n % 256 (chr(322) = 'B'); "" for a negative n.
// - translate(s, from, to): each character of s found in `from` is replaced by the character at
//   the same position of `to`, or removed when `to` is shorter; the first occurrence in `from`
//   wins.
// - split_part(s, delimiter, part): the part-th (1-based; negative counts from the end) piece of
//   s split on `delimiter`; "" when out of range; an empty delimiter does not split; part 0 is an
//   error.
// - substring_index(s, delimiter, count): everything before the count-th delimiter from the left
//   (count > 0) or after the count-th from the right (count < 0); the whole string when there are
//   fewer; "" for count 0 or an empty delimiter.
// Delimiters, `from`, `to`, `part` and `count` may be columns or literals; a null anywhere gives null.

#include <arrow/api.h>

#include <unordered_map>
#include <vector>

#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/string/string_args_internal.h"
#include "ketch/functions/string/string_functions.h"
#include "ketch/functions/string/unicode_internal.h"

namespace ketch::str {
namespace {

char SoundexCode(char upper) {
  switch (upper) {
    case 'B':
    case 'F':
    case 'P':
    case 'V':
      return '1';
    case 'C':
    case 'G':
    case 'J':
    case 'K':
    case 'Q':
    case 'S':
    case 'X':
    case 'Z':
      return '2';
    case 'D':
    case 'T':
      return '3';
    case 'L':
      return '4';
    case 'M':
    case 'N':
      return '5';
    case 'R':
      return '6';
    default:
      return '0';  // vowels, H, W, Y
  }
}

bool IsAsciiLetter(char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char AsciiUpper(char32_t c) { return static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c); }

void Soundex(std::string_view input, std::string* out) {
  out->clear();
  if (input.empty()) return;
  if (!IsAsciiLetter(static_cast<unsigned char>(input[0]))) {
    out->assign(input);
    return;
  }
  const char first = AsciiUpper(static_cast<unsigned char>(input[0]));
  out->push_back(first);
  char last = SoundexCode(first);
  size_t pos = 1;
  while (pos < input.size()) {
    const char32_t c = unicode::NextCodePoint(input, &pos);
    if (!IsAsciiLetter(c)) {
      last = '0';  // an interior non-letter separates like a vowel (Spark)
      continue;
    }
    const char upper = AsciiUpper(c);
    const char code = SoundexCode(upper);
    if (code == '0') {
      if (upper != 'H' && upper != 'W') last = '0';
    } else if (code != last) {
      out->push_back(code);
      if (out->size() == 4) return;
      last = code;
    }
  }
  out->resize(4, '0');
}

/// `from` → replacement (-1: remove), first occurrence winning.
class Translation {
 public:
  void Reset(std::string_view from, std::string_view to) {
    map_.clear();
    unicode::DecodeUtf8(to, &to_);
    size_t pos = 0;
    size_t index = 0;
    while (pos < from.size()) {
      const char32_t c = unicode::NextCodePoint(from, &pos);
      map_.try_emplace(c, index < to_.size() ? static_cast<int64_t>(to_[index]) : -1);
      ++index;
    }
  }

  void Apply(std::string_view input, std::string* out) const {
    out->clear();
    size_t pos = 0;
    while (pos < input.size()) {
      const char32_t c = unicode::NextCodePoint(input, &pos);
      auto it = map_.find(c);
      if (it == map_.end()) {
        unicode::AppendUtf8(c, out);
      } else if (it->second >= 0) {
        unicode::AppendUtf8(static_cast<char32_t>(it->second), out);
      }
    }
  }

 private:
  std::unordered_map<char32_t, int64_t> map_;
  std::vector<char32_t> to_;
};

/// Byte offsets of the non-overlapping occurrences of `delimiter` (not empty) in `s`, left to
/// right (Rust's `str::split`).
void FindAll(std::string_view s, std::string_view delimiter, std::vector<size_t>* at) {
  at->clear();
  size_t pos = s.find(delimiter);
  while (pos != std::string_view::npos) {
    at->push_back(pos);
    pos = s.find(delimiter, pos + delimiter.size());
  }
}

std::string_view SplitPart(std::string_view s, std::string_view delimiter, int64_t part,
                           std::vector<size_t>* at) {
  if (delimiter.empty()) return part == 1 || part == -1 ? s : std::string_view();
  FindAll(s, delimiter, at);
  const uint64_t pieces = at->size() + 1;
  const uint64_t magnitude = part > 0 ? static_cast<uint64_t>(part) : 0 - static_cast<uint64_t>(part);
  if (magnitude > pieces) return {};
  const uint64_t index = part > 0 ? magnitude - 1 : pieces - magnitude;  // 0-based piece
  const size_t begin = index == 0 ? 0 : (*at)[index - 1] + delimiter.size();
  const size_t end = index == pieces - 1 ? s.size() : (*at)[index];
  return s.substr(begin, end - begin);
}

std::string_view SubstringIndex(std::string_view s, std::string_view delimiter, int64_t count,
                                std::vector<size_t>* at) {
  if (count == 0 || delimiter.empty()) return {};
  FindAll(s, delimiter, at);
  const uint64_t magnitude = count > 0 ? static_cast<uint64_t>(count) : 0 - static_cast<uint64_t>(count);
  if (magnitude > at->size()) return s;
  if (count > 0) return s.substr(0, (*at)[magnitude - 1]);
  return s.substr((*at)[at->size() - magnitude] + delimiter.size());
}

class SoundexFunction : public ScalarFunction {
 public:
  std::string name() const override { return "soundex"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(CheckStringArgs(name(), 1, arg_types, arg_exprs));
    return StringResultType(arg_types[0]);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, StringArg::Make(args[0]));
    const int64_t rows = RowsToCompute(args, ctx.num_rows);
    StringOutput output(StringResultType(args[0].type()));
    ARROW_RETURN_NOT_OK(output.Reserve(rows));
    std::string code;
    for (int64_t i = 0; i < rows; ++i) {
      if (input.IsNull(i)) {
        ARROW_RETURN_NOT_OK(output.AppendNull());
        continue;
      }
      Soundex(input.Value(i), &code);
      ARROW_RETURN_NOT_OK(output.Append(code));
    }
    ARROW_ASSIGN_OR_RAISE(auto out, output.Finish());
    return FinishResult(args, out);
  }
};

class AsciiFunction : public ScalarFunction {
 public:
  std::string name() const override { return "ascii"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(CheckStringArgs(name(), 1, arg_types, arg_exprs));
    return arrow::int32();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, StringArg::Make(args[0]));
    const int64_t rows = RowsToCompute(args, ctx.num_rows);
    arrow::Int32Builder builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(rows));
    for (int64_t i = 0; i < rows; ++i) {
      if (input.IsNull(i)) {
        builder.UnsafeAppendNull();
        continue;
      }
      const std::string_view value = input.Value(i);
      builder.UnsafeAppend(value.empty() ? 0 : static_cast<int32_t>(static_cast<int8_t>(value[0])));
    }
    std::shared_ptr<arrow::Array> out;
    ARROW_RETURN_NOT_OK(builder.Finish(&out));
    return FinishResult(args, out);
  }
};

class ChrFunction : public ScalarFunction {
 public:
  std::string name() const override { return "chr"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    if (arg_types.size() != 1) return arrow::Status::Invalid("chr takes 1 argument, got ", arg_types.size());
    ARROW_RETURN_NOT_OK(CheckIntArg(name(), 0, arg_types, arg_exprs));
    return arrow::utf8();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, IntArg::Make(args[0]));
    const int64_t rows = RowsToCompute(args, ctx.num_rows);
    arrow::StringBuilder builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(rows));
    std::string character;
    for (int64_t i = 0; i < rows; ++i) {
      if (input.IsNull(i)) {
        ARROW_RETURN_NOT_OK(builder.AppendNull());
        continue;
      }
      const int64_t n = input.Value(i);
      character.clear();
      if (n >= 0) unicode::AppendUtf8(static_cast<char32_t>(n % 256), &character);
      ARROW_RETURN_NOT_OK(builder.Append(character));
    }
    std::shared_ptr<arrow::Array> out;
    ARROW_RETURN_NOT_OK(builder.Finish(&out));
    return FinishResult(args, out);
  }
};

class TranslateFunction : public ScalarFunction {
 public:
  std::string name() const override { return "translate"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(CheckStringArgs(name(), 3, arg_types, arg_exprs));
    return StringResultType(arg_types[0]);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, StringArg::Make(args[0]));
    ARROW_ASSIGN_OR_RAISE(auto from, StringArg::Make(args[1]));
    ARROW_ASSIGN_OR_RAISE(auto to, StringArg::Make(args[2]));
    const int64_t rows = RowsToCompute(args, ctx.num_rows);
    StringOutput output(StringResultType(args[0].type()));
    ARROW_RETURN_NOT_OK(output.Reserve(rows));
    const bool constant_map = from.is_scalar() && to.is_scalar();
    Translation translation;
    if (constant_map && !from.IsNull(0) && !to.IsNull(0)) translation.Reset(from.Value(0), to.Value(0));
    std::string translated;
    for (int64_t i = 0; i < rows; ++i) {
      if (input.IsNull(i) || from.IsNull(i) || to.IsNull(i)) {
        ARROW_RETURN_NOT_OK(output.AppendNull());
        continue;
      }
      if (!constant_map) translation.Reset(from.Value(i), to.Value(i));
      translation.Apply(input.Value(i), &translated);
      ARROW_RETURN_NOT_OK(output.Append(translated));
    }
    ARROW_ASSIGN_OR_RAISE(auto out, output.Finish());
    return FinishResult(args, out);
  }
};

/// split_part and substring_index: (string, delimiter, integer) → string.
class DelimitedFunction : public ScalarFunction {
 public:
  explicit DelimitedFunction(bool split_part) : split_part_(split_part) {}

  std::string name() const override { return split_part_ ? "split_part" : "substring_index"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    if (arg_types.size() != 3) {
      return arrow::Status::Invalid(name(), " takes 3 arguments, got ", arg_types.size());
    }
    ARROW_RETURN_NOT_OK(CheckStringArgs(name(), 2, {arg_types[0], arg_types[1]}, arg_exprs));
    ARROW_RETURN_NOT_OK(CheckIntArg(name(), 2, arg_types, arg_exprs));
    return StringResultType(arg_types[0]);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, StringArg::Make(args[0]));
    ARROW_ASSIGN_OR_RAISE(auto delimiter, StringArg::Make(args[1]));
    ARROW_ASSIGN_OR_RAISE(auto number, IntArg::Make(args[2]));
    if (split_part_ && number.is_scalar() && !number.IsNull(0) && number.Value(0) == 0) {
      return arrow::Status::Invalid(
          "split_part: part must not be 0 (parts count from 1, or from -1 at the end)");
    }
    const int64_t rows = RowsToCompute(args, ctx.num_rows);
    StringOutput output(StringResultType(args[0].type()));
    ARROW_RETURN_NOT_OK(output.Reserve(rows));
    std::vector<size_t> at;
    for (int64_t i = 0; i < rows; ++i) {
      if (input.IsNull(i) || delimiter.IsNull(i) || number.IsNull(i)) {
        ARROW_RETURN_NOT_OK(output.AppendNull());
        continue;
      }
      const int64_t n = number.Value(i);
      if (split_part_) {
        if (n == 0) {
          return arrow::Status::Invalid("split_part: part must not be 0 (parts count from 1, or from -1 at ",
                                        "the end), got 0 at source row ", ctx.SourceRow(i));
        }
        ARROW_RETURN_NOT_OK(output.Append(SplitPart(input.Value(i), delimiter.Value(i), n, &at)));
      } else {
        ARROW_RETURN_NOT_OK(output.Append(SubstringIndex(input.Value(i), delimiter.Value(i), n, &at)));
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto out, output.Finish());
    return FinishResult(args, out);
  }

 private:
  bool split_part_;
};

}  // namespace

arrow::Status RegisterStringMiscFunctions() {
  auto* registry = FunctionRegistry::Global();
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<SoundexFunction>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<AsciiFunction>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ChrFunction>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<TranslateFunction>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<DelimitedFunction>(/*split_part=*/true)));
  return registry->Register(std::make_shared<DelimitedFunction>(/*split_part=*/false));
}

}  // namespace ketch::str
