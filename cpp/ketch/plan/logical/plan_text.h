#pragma once

#include <arrow/api.h>

#include <string>
#include <vector>

// Text helpers shared by the logical plan's constructors (error messages) and its display.

namespace ketch {

/// "a, b, c".
std::string JoinNames(const std::vector<std::string>& names);
/// "{a: int64, b: string}".
std::string SchemaString(const arrow::Schema& schema);
/// An Arrow type as Arrow prints it (error messages).
std::string PrettyType(const arrow::DataType& type);

}  // namespace ketch
