#include <arrow/compute/api.h>

#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/string/string_args_internal.h"

namespace ketch::str {

arrow::Result<StringArg> StringArg::Make(const arrow::Datum& datum) {
  StringArg arg;
  const auto id = datum.type()->id();
  if (datum.is_scalar()) {
    arg.scalar_ = true;
    const auto& scalar = *datum.scalar();
    arg.scalar_valid_ = scalar.is_valid && id != arrow::Type::NA;
    if (arg.scalar_valid_) {
      if (!arrow::is_base_binary_like(id) && id != arrow::Type::STRING_VIEW) {
        return arrow::Status::TypeError("expected a string scalar, got ", scalar.type->ToString());
      }
      const auto& buffer = *static_cast<const arrow::BaseBinaryScalar&>(scalar).value;
      arg.scalar_value_ = std::string(reinterpret_cast<const char*>(buffer.data()), buffer.size());
    }
    return arg;
  }
  auto array = datum.make_array();
  switch (id) {
    case arrow::Type::NA:
      arg.all_null_ = true;
      arg.array_ = std::move(array);
      return arg;
    case arrow::Type::STRING:
      arg.array_ = std::move(array);
      return arg;
    case arrow::Type::LARGE_STRING:
      arg.array_ = std::move(array);
      arg.large_ = true;
      return arg;
    default: {
      ARROW_ASSIGN_OR_RAISE(arg.array_, arrow::compute::Cast(*array, arrow::large_utf8()));
      arg.large_ = true;
      return arg;
    }
  }
}

arrow::Result<IntArg> IntArg::Make(const arrow::Datum& datum) {
  IntArg arg;
  if (datum.is_scalar()) {
    arg.scalar_ = true;
    const auto& scalar = *datum.scalar();
    arg.scalar_valid_ = scalar.is_valid && scalar.type->id() != arrow::Type::NA;
    if (arg.scalar_valid_) {
      ARROW_ASSIGN_OR_RAISE(auto cast, scalar.CastTo(arrow::int64()));
      arg.scalar_value_ = static_cast<const arrow::Int64Scalar&>(*cast).value;
    }
    return arg;
  }
  if (datum.type()->id() == arrow::Type::NA) {
    arg.all_null_ = true;
    return arg;
  }
  ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(datum, arrow::int64()));
  arg.array_ = std::static_pointer_cast<arrow::Int64Array>(cast.make_array());
  return arg;
}

namespace {

const char* Ordinal(size_t index) {
  static const char* kNames[] = {"first", "second", "third", "fourth"};
  return index < 4 ? kNames[index] : "an";
}

}  // namespace

arrow::Status CheckStringArgs(const std::string& function, size_t count,
                              const std::vector<std::shared_ptr<arrow::DataType>>& arg_types,
                              const std::vector<ExprPtr>& arg_exprs) {
  if (arg_types.size() != count) {
    return arrow::Status::Invalid(function, " takes ", count, " argument", count == 1 ? "" : "s", ", got ",
                                  arg_types.size());
  }
  for (size_t i = 0; i < count; ++i) {
    const auto id = arg_types[i]->id();
    if (arrow::is_string(id) || id == arrow::Type::STRING_VIEW || id == arrow::Type::NA) continue;
    return arrow::Status::TypeError(function, " expects a string as its ", Ordinal(i), " argument, got ",
                                    arg_exprs[i]->ToString(), " of type ", arg_types[i]->ToString());
  }
  return arrow::Status::OK();
}

arrow::Status CheckIntArg(const std::string& function, size_t index,
                          const std::vector<std::shared_ptr<arrow::DataType>>& arg_types,
                          const std::vector<ExprPtr>& arg_exprs) {
  const auto id = arg_types[index]->id();
  if (arrow::is_integer(id) || id == arrow::Type::NA) return arrow::Status::OK();
  return arrow::Status::TypeError(function, " expects an integer as its ", Ordinal(index), " argument, got ",
                                  arg_exprs[index]->ToString(), " of type ", arg_types[index]->ToString());
}

std::shared_ptr<arrow::DataType> StringResultType(const std::shared_ptr<arrow::DataType>& type) {
  switch (type->id()) {
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
      return type;
    case arrow::Type::NA:
      return arrow::utf8();
    default:
      return arrow::large_utf8();
  }
}

int64_t RowsToCompute(const std::vector<arrow::Datum>& args, int64_t num_rows) {
  for (const auto& arg : args) {
    if (!arg.is_scalar()) return num_rows;
  }
  return 1;
}

arrow::Result<arrow::Datum> FinishResult(const std::vector<arrow::Datum>& args,
                                         const std::shared_ptr<arrow::Array>& out) {
  for (const auto& arg : args) {
    if (!arg.is_scalar()) return arrow::Datum(out);
  }
  ARROW_ASSIGN_OR_RAISE(auto scalar, out->GetScalar(0));
  return arrow::Datum(std::move(scalar));
}

StringOutput::StringOutput(const std::shared_ptr<arrow::DataType>& type)
    : large_(type->id() == arrow::Type::LARGE_STRING) {}

arrow::Status StringOutput::Reserve(int64_t rows) {
  return large_ ? large_builder_.Reserve(rows) : small_builder_.Reserve(rows);
}

arrow::Status StringOutput::Append(std::string_view value) {
  return large_ ? large_builder_.Append(value) : small_builder_.Append(value);
}

arrow::Status StringOutput::AppendNull() {
  return large_ ? large_builder_.AppendNull() : small_builder_.AppendNull();
}

arrow::Result<std::shared_ptr<arrow::Array>> StringOutput::Finish() {
  std::shared_ptr<arrow::Array> out;
  if (large_) {
    ARROW_RETURN_NOT_OK(large_builder_.Finish(&out));
  } else {
    ARROW_RETURN_NOT_OK(small_builder_.Finish(&out));
  }
  return out;
}

}  // namespace ketch::str
