#pragma once

#include <arrow/api.h>

#include <string>

#include "ketch/expr/function_registry.h"

namespace ketch {

/// What `per_row_option` names in the errors of a per-row call: the user's function and argument
/// ("regexp" and "pattern").
struct PerRowLabel {
  std::string function;
  std::string argument;
};

/// A function that takes one of its constant options from a column instead, in ONE pass over the
/// rows. `per_row_option` (per_row_option.h) calls it in place of grouping the rows by value and
/// calling the function once per distinct value (about 70 us a group, which made a column of
/// mostly distinct regex patterns cost seconds per morsel). Implemented beside a ScalarFunction
/// (found by dynamic_cast on the registry's function).
class PerRowOptionKernel {
 public:
  virtual ~PerRowOptionKernel() = default;

  /// Whether ExecutePerRow takes `option` (e.g. "pattern") per row.
  virtual bool TakesPerRow(const std::string& option) const = 0;

  /// `input` and `values`: arrays of `ctx.num_rows` rows; row i runs with option `option` set to
  /// `values[i]` (a null value gives a null result) and the other options from `options`.
  /// Errors about one row's value name it as "<function> with <argument> '<value>' (a per-row
  /// value): ...".
  virtual arrow::Result<arrow::Datum> ExecutePerRow(const std::shared_ptr<arrow::Array>& input,
                                                    const std::string& option,
                                                    const std::shared_ptr<arrow::Array>& values,
                                                    const FunctionOptions& options, const PerRowLabel& label,
                                                    const EvalContext& ctx) const = 0;
};

}  // namespace ketch
