#include "ketch/functions/nested/nested_function_base.h"

#include "ketch/functions/nested/list_rows.h"

namespace ketch::nested {

arrow::Status ExpectListArgument(const std::string& label, size_t index,
                                 const std::vector<std::shared_ptr<arrow::DataType>>& types,
                                 const std::vector<ExprPtr>& exprs) {
  if (index < types.size() && IsListLike(*types[index]) && types[index]->id() != arrow::Type::MAP) {
    return arrow::Status::OK();
  }
  return arrow::Status::TypeError(label, " expects a list, but ", exprs[index]->ToString(), " has type ",
                                  types[index]->ToString());
}

arrow::Status ExpectArgumentCount(const std::string& label, size_t count,
                                  const std::vector<std::shared_ptr<arrow::DataType>>& types) {
  if (types.size() == count) return arrow::Status::OK();
  return arrow::Status::Invalid(label, " takes ", count, " arguments, got ", types.size());
}

arrow::Result<bool> GetBoolOption(const FunctionOptions& options, const std::string& key, bool fallback) {
  if (!HasOption(options, key)) return fallback;
  ARROW_ASSIGN_OR_RAISE(auto cast, options.at(key)->CastTo(arrow::boolean()));
  return static_cast<const arrow::BooleanScalar&>(*cast).value;
}

std::shared_ptr<arrow::Field> ValueField(const arrow::DataType& list_type) { return list_type.field(0); }

}  // namespace ketch::nested
