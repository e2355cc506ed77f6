#pragma once

#include <arrow/api.h>

#include <string>
#include <vector>

#include "ketch/expr/function_registry.h"

namespace ketch::nested {

/// TypeError "<label> expects <what>, but <expr> has type <type>" unless argument `index` is a list.
arrow::Status ExpectListArgument(const std::string& label, size_t index,
                                 const std::vector<std::shared_ptr<arrow::DataType>>& types,
                                 const std::vector<ExprPtr>& exprs);

/// Invalid unless exactly `count` arguments were given.
arrow::Status ExpectArgumentCount(const std::string& label, size_t count,
                                  const std::vector<std::shared_ptr<arrow::DataType>>& types);

/// The boolean option `key`, or `fallback` when it is absent or null.
arrow::Result<bool> GetBoolOption(const FunctionOptions& options, const std::string& key, bool fallback);

/// The value field of a list-like type (the key/item struct for a map).
std::shared_ptr<arrow::Field> ValueField(const arrow::DataType& list_type);

}  // namespace ketch::nested
