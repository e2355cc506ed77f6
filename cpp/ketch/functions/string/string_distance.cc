// Edit distances and similarities between two strings, on Unicode code points, as Daft's
// daft-functions-utf8 kernels define them:
// - levenshtein_distance: Wagner–Fischer dynamic programming, two rows of the shorter length.
// - damerau_levenshtein_distance: the optimal string alignment (OSA) variant, which also counts
//   the transposition of two adjacent characters as one edit but edits no substring twice
//   ("CA" → "ABC" is 3, not 2); three rolling rows.
// - hamming_distance_str: positions that differ; null when the lengths differ.
// - jaro_similarity: Jaro (1989): matches within max(|a|, |b|) / 2 - 1 positions, half the
//   out-of-order matches are transpositions; 1.0 for two empty strings, 0.0 for one.
// - jaro_winkler_similarity: Winkler (1990): jaro + l * 0.1 * (1 - jaro), l the common prefix
//   up to 4 characters, applied at every jaro value (no 0.7 threshold), as Daft.
// Either argument may be a column or a literal; a null on either side gives null.

#include <arrow/api.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/string/string_args_internal.h"
#include "ketch/functions/string/string_functions.h"
#include "ketch/functions/string/unicode_internal.h"

namespace ketch::str {
namespace {

using CodePoints = std::vector<char32_t>;

/// Buffers one kernel call reuses across its rows: once they have grown to the longest strings,
/// a row allocates nothing.
struct Scratch {
  std::vector<int64_t> before, prev, curr;    // dynamic-programming rows (Levenshtein, OSA)
  std::vector<uint8_t> a_matched, b_matched;  // Jaro's match flags
};

int64_t Levenshtein(const CodePoints& a, const CodePoints& b, Scratch* scratch) {
  const CodePoints& longer = a.size() >= b.size() ? a : b;
  const CodePoints& shorter = a.size() >= b.size() ? b : a;
  const size_t n = shorter.size();
  if (n == 0) return static_cast<int64_t>(longer.size());
  auto& prev = scratch->prev;
  auto& curr = scratch->curr;
  prev.resize(n + 1);
  curr.resize(n + 1);
  for (size_t j = 0; j <= n; ++j) prev[j] = static_cast<int64_t>(j);
  for (size_t i = 1; i <= longer.size(); ++i) {
    curr[0] = static_cast<int64_t>(i);
    for (size_t j = 1; j <= n; ++j) {
      const int64_t cost = longer[i - 1] == shorter[j - 1] ? 0 : 1;
      curr[j] = std::min({prev[j] + 1, curr[j - 1] + 1, prev[j - 1] + cost});
    }
    std::swap(prev, curr);
  }
  return prev[n];
}

int64_t OptimalStringAlignment(const CodePoints& a, const CodePoints& b, Scratch* scratch) {
  const size_t n = a.size(), m = b.size();
  if (n == 0) return static_cast<int64_t>(m);
  if (m == 0) return static_cast<int64_t>(n);
  // Rows i - 2, i - 1 and i of the (n + 1) x (m + 1) matrix.
  auto& before = scratch->before;
  auto& prev = scratch->prev;
  auto& curr = scratch->curr;
  before.resize(m + 1);
  prev.resize(m + 1);
  curr.resize(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = static_cast<int64_t>(j);
  for (size_t i = 1; i <= n; ++i) {
    curr[0] = static_cast<int64_t>(i);
    for (size_t j = 1; j <= m; ++j) {
      const int64_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      int64_t best = std::min({prev[j] + 1, curr[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        best = std::min(best, before[j - 2] + 1);
      }
      curr[j] = best;
    }
    std::swap(before, prev);
    std::swap(prev, curr);
  }
  return prev[m];
}

std::optional<int64_t> Hamming(const CodePoints& a, const CodePoints& b, Scratch*) {
  if (a.size() != b.size()) return std::nullopt;
  int64_t distance = 0;
  for (size_t i = 0; i < a.size(); ++i) distance += a[i] != b[i];
  return distance;
}

double Jaro(const CodePoints& a, const CodePoints& b, Scratch* scratch) {
  const size_t n = a.size(), m = b.size();
  if (n == 0 && m == 0) return 1.0;
  if (n == 0 || m == 0) return 0.0;
  const size_t half = std::max(n, m) / 2;
  const size_t window = half > 0 ? half - 1 : 0;
  auto& a_matched = scratch->a_matched;
  auto& b_matched = scratch->b_matched;
  a_matched.assign(n, 0);
  b_matched.assign(m, 0);
  double matches = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const size_t start = i > window ? i - window : 0;
    const size_t end = std::min(i + window + 1, m);
    for (size_t j = start; j < end; ++j) {
      if (b_matched[j] || a[i] != b[j]) continue;
      a_matched[i] = b_matched[j] = true;
      matches += 1.0;
      break;
    }
  }
  if (matches == 0.0) return 0.0;
  double transpositions = 0.0;
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!a_matched[i]) continue;
    while (!b_matched[k]) ++k;
    if (a[i] != b[k]) transpositions += 1.0;
    ++k;
  }
  // The same operations in the same order as Daft, so results agree to the last bit.
  return (matches / static_cast<double>(n) + matches / static_cast<double>(m) +
          (matches - transpositions / 2.0) / matches) /
         3.0;
}

double JaroWinkler(const CodePoints& a, const CodePoints& b, Scratch* scratch) {
  const double jaro = Jaro(a, b, scratch);
  size_t prefix = 0;
  while (prefix < 4 && prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  return jaro + (static_cast<double>(prefix) * 0.1 * (1.0 - jaro));
}

/// A function of two strings returning `ArrowType` values (int64 or float64); `Compute` gives
/// nullopt for a null result and may use the call's `Scratch` buffers.
template <typename ArrowType>
class PairFunction : public ScalarFunction {
 public:
  using Value = typename ArrowType::c_type;
  using Compute = std::optional<Value> (*)(const CodePoints&, const CodePoints&, Scratch*);

  PairFunction(std::string name, Compute compute) : name_(std::move(name)), compute_(compute) {}

  std::string name() const override { return name_; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(CheckStringArgs(name_, 2, arg_types, arg_exprs));
    return arrow::TypeTraits<ArrowType>::type_singleton();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto left, StringArg::Make(args[0]));
    ARROW_ASSIGN_OR_RAISE(auto right, StringArg::Make(args[1]));
    const int64_t rows = RowsToCompute(args, ctx.num_rows);
    typename arrow::TypeTraits<ArrowType>::BuilderType builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(rows));
    CodePoints a, b;
    Scratch scratch;
    // A literal side is decoded once.
    if (left.is_scalar() && !left.IsNull(0)) unicode::DecodeUtf8(left.Value(0), &a);
    if (right.is_scalar() && !right.IsNull(0)) unicode::DecodeUtf8(right.Value(0), &b);
    for (int64_t i = 0; i < rows; ++i) {
      if (left.IsNull(i) || right.IsNull(i)) {
        builder.UnsafeAppendNull();
        continue;
      }
      if (!left.is_scalar()) unicode::DecodeUtf8(left.Value(i), &a);
      if (!right.is_scalar()) unicode::DecodeUtf8(right.Value(i), &b);
      const std::optional<Value> value = compute_(a, b, &scratch);
      if (value) {
        builder.UnsafeAppend(*value);
      } else {
        builder.UnsafeAppendNull();
      }
    }
    std::shared_ptr<arrow::Array> out;
    ARROW_RETURN_NOT_OK(builder.Finish(&out));
    return FinishResult(args, out);
  }

 private:
  std::string name_;
  Compute compute_;
};

}  // namespace

arrow::Status RegisterStringDistanceFunctions() {
  auto* registry = FunctionRegistry::Global();
  using IntFunction = PairFunction<arrow::Int64Type>;
  using FloatFunction = PairFunction<arrow::DoubleType>;
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<IntFunction>(
      "levenshtein_distance", [](const CodePoints& a, const CodePoints& b, Scratch* scratch) {
        return std::optional<int64_t>(Levenshtein(a, b, scratch));
      })));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<IntFunction>(
      "damerau_levenshtein_distance", [](const CodePoints& a, const CodePoints& b, Scratch* scratch) {
        return std::optional<int64_t>(OptimalStringAlignment(a, b, scratch));
      })));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<IntFunction>("hamming_distance_str", Hamming)));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<FloatFunction>(
      "jaro_similarity", [](const CodePoints& a, const CodePoints& b, Scratch* scratch) {
        return std::optional<double>(Jaro(a, b, scratch));
      })));
  return registry->Register(std::make_shared<FloatFunction>(
      "jaro_winkler_similarity", [](const CodePoints& a, const CodePoints& b, Scratch* scratch) {
        return std::optional<double>(JaroWinkler(a, b, scratch));
      }));
}

}  // namespace ketch::str
