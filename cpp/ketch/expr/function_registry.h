#pragma once

#include <arrow/api.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ketch/expr/expr.h"

namespace ketch {

/// A scalar function: a return type from argument types at plan time, a call on arrays at run time.
/// Ketch's own kernels (image, url, ...) implement this; Arrow compute functions are reached through
/// the same interface by an adapter.
class ScalarFunction {
 public:
  virtual ~ScalarFunction() = default;
  virtual std::string name() const = 0;
  /// Plan-time type resolution. `arg_exprs` are given so errors can name the argument.
  virtual arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& options) const = 0;
  /// Run-time call. Each argument is an array of `ctx.num_rows` values or a scalar (a literal);
  /// the result is an array of `ctx.num_rows` values or a scalar when every argument is one.
  virtual arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args,
                                              const FunctionOptions& options,
                                              const EvalContext& ctx) const = 0;
};

/// Name → function. Lookup falls back to Arrow's compute registry for names Ketch does not define
/// (add, equal, and_kleene, is_null, ...), so every Arrow kernel is callable by its name.
class FunctionRegistry {
 public:
  static FunctionRegistry* Global();

  arrow::Status Register(std::shared_ptr<ScalarFunction> function);
  arrow::Result<std::shared_ptr<ScalarFunction>> Get(const std::string& name);

 private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<ScalarFunction>> functions_;
};

/// Option accessors with clear errors.
arrow::Result<std::string> GetStringOption(const FunctionOptions& options, const std::string& key,
                                           const std::string& function);
arrow::Result<int64_t> GetIntOption(const FunctionOptions& options, const std::string& key,
                                    const std::string& function);
bool HasOption(const FunctionOptions& options, const std::string& key);

/// Empty arrays of `types`: the probe a ResolveType runs an Arrow kernel on, so Arrow's own dispatch
/// rules (implicit casts included) decide the result type, at a cost of microseconds.
arrow::Result<std::vector<arrow::Datum>> EmptyArguments(
    const std::vector<std::shared_ptr<arrow::DataType>>& types);

/// "cannot apply 'NAME' to (a: int64, b: string)": the plan-time TypeError for arguments a
/// function does not take; `detail`, when not empty, follows after ": ".
arrow::Status CannotApply(const std::string& name,
                          const std::vector<std::shared_ptr<arrow::DataType>>& arg_types,
                          const std::vector<ExprPtr>& arg_exprs, const std::string& detail = "");

/// Returns the argument as an array of `num_rows` values (scalars are broadcast).
arrow::Result<std::shared_ptr<arrow::Array>> ToArray(const arrow::Datum& datum, int64_t num_rows);

}  // namespace ketch
