#pragma once

#include <arrow/api.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "ketch/io/formats/format_options.h"
#include "ketch/io/object_store.h"

namespace ketch::io {

/// The schema of a CSV file, inferred by Arrow's CSV reader from its first block (1 MiB): int64,
/// float64, bool, date32, timestamp or string per column; without a header the columns are named
/// column_1, column_2, ... (Daft's names). Errors name the path.
arrow::Result<std::shared_ptr<arrow::Schema>> InferCsvSchema(const std::string& path,
                                                             const CsvOptions& options, const S3Config& s3);

/// Streams a CSV file's `columns` (by name) converted to the types of `schema` (the scan's data
/// schema: every file is read with the same types). A value that does not convert, or a row with
/// the wrong number of fields (unless allow_variable_columns), is an error naming the row.
arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenCsv(
    const std::string& path, const CsvOptions& options, const std::shared_ptr<arrow::Schema>& schema,
    const std::vector<std::string>& columns, const S3Config& s3, std::atomic<int64_t>* bytes_read);

/// The schema of a newline-delimited JSON file, inferred by Arrow's JSON reader from its first
/// block (1 MiB): int64, float64, bool, string, list and struct columns. Errors name the path.
arrow::Result<std::shared_ptr<arrow::Schema>> InferJsonSchema(const std::string& path, const S3Config& s3);

/// Streams the named `columns` of a newline-delimited JSON file with the types of `schema`;
/// fields not asked for are skipped. A line that is not JSON is an error.
arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenJson(
    const std::string& path, const std::shared_ptr<arrow::Schema>& schema,
    const std::vector<std::string>& columns, const S3Config& s3, std::atomic<int64_t>* bytes_read);

}  // namespace ketch::io
