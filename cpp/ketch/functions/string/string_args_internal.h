#pragma once

// Argument access shared by Ketch's own row-at-a-time string kernels (string_distance.cc,
// string_case.cc, string_misc.cc): each argument is an array or a literal scalar, read per row
// without broadcasting the scalar first.

#include <arrow/api.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ketch/expr/function_registry.h"

namespace ketch::str {

/// A string argument (string, large_string, string_view or null type; array or scalar).
class StringArg {
 public:
  static arrow::Result<StringArg> Make(const arrow::Datum& datum);

  bool IsNull(int64_t i) const {
    if (scalar_) return !scalar_valid_;
    return all_null_ || array_->IsNull(i);
  }
  /// The value of row `i`; only for a row that is not null.
  std::string_view Value(int64_t i) const {
    if (scalar_) return scalar_value_;
    return large_ ? static_cast<const arrow::LargeStringArray&>(*array_).GetView(i)
                  : static_cast<const arrow::StringArray&>(*array_).GetView(i);
  }
  bool is_scalar() const { return scalar_; }

 private:
  std::shared_ptr<arrow::Array> array_;
  bool large_ = false;
  bool all_null_ = false;
  bool scalar_ = false;
  bool scalar_valid_ = false;
  std::string scalar_value_;
};

/// An integer argument (any integer type or null type; array or scalar), read as int64.
class IntArg {
 public:
  static arrow::Result<IntArg> Make(const arrow::Datum& datum);

  bool IsNull(int64_t i) const {
    if (scalar_) return !scalar_valid_;
    return all_null_ || array_->IsNull(i);
  }
  int64_t Value(int64_t i) const { return scalar_ ? scalar_value_ : array_->Value(i); }
  bool is_scalar() const { return scalar_; }

 private:
  std::shared_ptr<arrow::Int64Array> array_;
  bool all_null_ = false;
  bool scalar_ = false;
  bool scalar_valid_ = false;
  int64_t scalar_value_ = 0;
};

/// Plan time: `arg_types.size() == count`, each argument a string (or all-null); the TypeError
/// names the function, the argument's position, the expression and its type.
arrow::Status CheckStringArgs(const std::string& function, size_t count,
                              const std::vector<std::shared_ptr<arrow::DataType>>& arg_types,
                              const std::vector<ExprPtr>& arg_exprs);
/// Plan time: argument `index` is an integer (or all-null).
arrow::Status CheckIntArg(const std::string& function, size_t index,
                          const std::vector<std::shared_ptr<arrow::DataType>>& arg_types,
                          const std::vector<ExprPtr>& arg_exprs);

/// The string type a string-valued kernel returns for input type `type`: the same for string and
/// large_string, string for an all-null input, large_string for string_view.
std::shared_ptr<arrow::DataType> StringResultType(const std::shared_ptr<arrow::DataType>& type);

/// Rows to compute: 1 when every argument is a scalar (the result is then a scalar), else
/// `num_rows`.
int64_t RowsToCompute(const std::vector<arrow::Datum>& args, int64_t num_rows);

/// The result of a kernel that computed `rows` rows: the array, or its single value as a scalar
/// when every argument was a scalar.
arrow::Result<arrow::Datum> FinishResult(const std::vector<arrow::Datum>& args,
                                         const std::shared_ptr<arrow::Array>& out);

/// Appends to a string or large_string builder, chosen at run time.
class StringOutput {
 public:
  explicit StringOutput(const std::shared_ptr<arrow::DataType>& type);
  arrow::Status Reserve(int64_t rows);
  arrow::Status Append(std::string_view value);
  arrow::Status AppendNull();
  arrow::Result<std::shared_ptr<arrow::Array>> Finish();

 private:
  bool large_;
  arrow::StringBuilder small_builder_;
  arrow::LargeStringBuilder large_builder_;
};

}  // namespace ketch::str
