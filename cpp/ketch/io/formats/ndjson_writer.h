#pragma once

#include <arrow/api.h>

#include <string>
#include <string_view>

namespace ketch::io {

/// Newline-delimited JSON (one object per row, "\n" after each) for write_json. Arrow C++ has a
/// JSON reader but no writer, so this small encoder walks the Arrow arrays directly:
/// - keys in column order, every column present; nulls as `null` (as Daft's writer, explicit nulls);
/// - strings UTF-8 as they are, with `"`, `\` and the control characters U+0000..U+001F escaped
///   (\n \r \t \b \f, else \u00XX), so a value can never break a line or the document;
/// - integers and booleans as JSON numbers / true / false; floats in the shortest form that reads
///   back to the same double; NaN and +-inf as null (JSON has no such numbers); decimals as numbers;
/// - dates as "YYYY-MM-DD", timestamps as ISO 8601 "YYYY-MM-DDTHH:MM:SS[.fraction]" with a "Z"
///   when the type has a time zone (values are UTC), times as "HH:MM:SS[.fraction]", durations as
///   integers in their unit;
/// - lists (all kinds) as arrays, structs as objects, maps as arrays of {"key", "value"} objects,
///   extension types (embeddings, tensors) through their storage, dictionaries through their values.
/// Binary columns (and Python objects, stored as binary) are refused by CheckNdjsonSchema: JSON
/// has no bytes type and any text encoding would read back as a different type.
arrow::Status CheckNdjsonSchema(const arrow::Schema& schema, std::string_view writer);

/// Appends the rows of `batch` to `out`. The schema must have passed CheckNdjsonSchema.
arrow::Status AppendNdjson(const arrow::RecordBatch& batch, std::string* out);

/// Appends `text` as a JSON string literal (quotes included, escaped as above).
void AppendJsonString(std::string_view text, std::string* out);

}  // namespace ketch::io
