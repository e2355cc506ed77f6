#pragma once

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ketch/expr/function_registry.h"

namespace ketch {

/// What the first argument of a function must be; checked at plan time.
enum class ArgKind { kAny, kString, kNumeric, kInteger, kFloating, kStruct, kList };

/// Builds Arrow compute options from a call's constant options (`function` names the Ketch
/// function in errors). Returning nullptr means "Arrow's defaults".
using OptionsMaker = std::function<arrow::Result<std::shared_ptr<arrow::compute::FunctionOptions>>(
    const FunctionOptions& options, const std::string& function)>;

/// One call of an Arrow compute function: the first step of a chain takes the call's arguments,
/// each later step takes the previous step's result alone.
struct ArrowStep {
  std::string arrow_function;
  OptionsMaker make_options;  ///< may be empty: no options
};

/// A Ketch function that is a chain of Arrow compute calls with options built from the call's
/// constant options (the plain registry fallback passes no options).
struct ArrowOptionsSpec {
  std::string name;  ///< the Ketch function name (what Python calls)
  ArgKind first_arg = ArgKind::kString;
  std::vector<ArrowStep> steps;
  /// When set, the result is cast to this type (e.g. uint64 for lengths, as Daft).
  std::shared_ptr<arrow::DataType> result_type;
  /// When set, the option holding a regular expression: an invalid one fails at plan time with
  /// an Invalid error naming the pattern.
  std::string pattern_option;
};

/// Registers `spec` in the global function registry.
arrow::Status RegisterArrowOptionsFunction(ArrowOptionsSpec spec);

/// Plan-time check of `type` against `kind`; the TypeError names the function, the expression and
/// the type ("lower expects a string, got col(x) of type int64").
arrow::Status CheckArgKind(ArgKind kind, const std::string& function,
                           const std::shared_ptr<arrow::DataType>& type, const Expr& expr);

/// Option accessors with defaults (an absent or null option gives the default).
arrow::Result<bool> BoolOption(const FunctionOptions& options, const std::string& key, bool fallback,
                               const std::string& function);
arrow::Result<int64_t> IntOption(const FunctionOptions& options, const std::string& key, int64_t fallback,
                                 const std::string& function);
arrow::Result<std::string> StringOption(const FunctionOptions& options, const std::string& key,
                                        const std::string& fallback, const std::string& function);

/// Wraps a failed run-time call: "<function> failed in the morsel starting at source row N: ...".
arrow::Status RunError(const std::string& function, const arrow::Status& cause, const EvalContext& ctx);

}  // namespace ketch
