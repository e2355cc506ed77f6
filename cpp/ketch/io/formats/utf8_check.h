#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <optional>

namespace ketch::io {

/// Where a batch holds a string that is not valid UTF-8: the (top-level) column and the row.
struct InvalidUtf8 {
  int column = -1;
  int64_t row = -1;
};

/// Finds the first string value of `batch` that is not valid UTF-8 (utf8, large_utf8 and
/// string_view arrays, dictionaries of them, and strings nested in lists, fixed-size lists,
/// maps and structs). Parquet files are not checked by Arrow's reader, and an invalid string
/// would reach generated JSON and text. One pass of Arrow's vectorised ValidateUTF8 over each
/// string column's value bytes; the row is searched only when that pass fails.
std::optional<InvalidUtf8> FindInvalidUtf8(const arrow::RecordBatch& batch);

}  // namespace ketch::io
