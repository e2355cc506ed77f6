#pragma once

// What simhash and minhash share: one string argument, n-gram options read at plan time and again
// at run time, and the text handed to the kernel as one LargeString array.

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ketch/expr/function_registry.h"
#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/math/hash_kernels.h"

namespace ketch::math {

/// The options every n-gram hash function takes.
struct NgramOptions {
  int64_t ngram_size;  ///< > 0
  HashKind kind;       ///< from Daft's `hash_function` name
};

/// Reads `ngram_size` (absent or null: `default_ngram_size`; when that is nullopt the option is
/// required) and `hash_function` (absent or null: `default_hash_function`). Invalid, naming
/// `function` and the value, for an ngram_size <= 0 or an unknown hash function name.
inline arrow::Result<NgramOptions> ReadNgramOptions(const FunctionOptions& options,
                                                    const std::string& function,
                                                    std::optional<int64_t> default_ngram_size,
                                                    const std::string& default_hash_function) {
  NgramOptions out;
  if (default_ngram_size) {
    ARROW_ASSIGN_OR_RAISE(out.ngram_size, IntOption(options, "ngram_size", *default_ngram_size, function));
  } else {
    ARROW_ASSIGN_OR_RAISE(out.ngram_size, GetIntOption(options, "ngram_size", function));
  }
  if (out.ngram_size <= 0) {
    return arrow::Status::Invalid(function, ": ngram_size must be > 0, got ", out.ngram_size);
  }
  ARROW_ASSIGN_OR_RAISE(auto name, StringOption(options, "hash_function", default_hash_function, function));
  ARROW_ASSIGN_OR_RAISE(out.kind, ParseHashKind(name, function));
  return out;
}

/// A function of one string (or large string) argument whose options parse into `Settings`.
/// `Settings::Read(options)` validates them; it runs at plan time (so bad options fail before the
/// query runs) and again at run time. Subclasses give the result type and the kernel.
template <typename Settings>
class NgramHashFunction : public ScalarFunction {
 public:
  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& options) const final {
    ARROW_RETURN_NOT_OK(CheckArgKind(ArgKind::kString, name(), arg_types[0], *arg_exprs[0]));
    ARROW_ASSIGN_OR_RAISE(auto settings, Settings::Read(options));
    return OutputType(settings);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const final {
    ARROW_ASSIGN_OR_RAISE(auto settings, Settings::Read(options));
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto strings, arrow::compute::Cast(*input, arrow::large_utf8()));
    return Compute(static_cast<const arrow::LargeStringArray&>(*strings), settings);
  }

 protected:
  /// The result type for these settings.
  virtual std::shared_ptr<arrow::DataType> OutputType(const Settings& settings) const = 0;
  /// One value per row of `text` (nulls included).
  virtual arrow::Result<arrow::Datum> Compute(const arrow::LargeStringArray& text,
                                              const Settings& settings) const = 0;
};

}  // namespace ketch::math
