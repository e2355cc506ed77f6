#include "ketch/io/formats/text_formats.h"

#include <arrow/csv/api.h>
#include <arrow/io/api.h>
#include <arrow/json/api.h>

#include <cctype>

#include "ketch/io/formats/file_access.h"

namespace ketch::io {
namespace {

arrow::csv::ParseOptions CsvParseOptions(const CsvOptions& options) {
  auto parse = arrow::csv::ParseOptions::Defaults();
  parse.delimiter = options.delimiter;
  parse.quoting = options.quoting;
  parse.quote_char = options.quote;
  parse.double_quote = options.double_quote;
  parse.escaping = options.escape != 0;
  if (options.escape != 0) parse.escape_char = options.escape;
  parse.newlines_in_values = options.quoting;
  parse.pad_short_rows = options.allow_variable_columns;
  parse.ignore_extra_columns = options.allow_variable_columns;
  return parse;
}

// Without a header: Daft's column names column_1, column_2, ... (counted from the first row).
arrow::Result<std::vector<std::string>> HeaderlessNames(const std::string& path, const CsvOptions& options,
                                                        const S3Config& s3) {
  ARROW_ASSIGN_OR_RAISE(auto file, OpenInputFile(path, s3));
  auto read = arrow::csv::ReadOptions::Defaults();
  read.use_threads = false;
  read.autogenerate_column_names = true;
  ARROW_ASSIGN_OR_RAISE(auto reader, arrow::csv::StreamingReader::Make(
                                         arrow::io::default_io_context(), file, read,
                                         CsvParseOptions(options), arrow::csv::ConvertOptions::Defaults()));
  std::vector<std::string> names;
  for (int i = 0; i < reader->schema()->num_fields(); ++i) names.push_back("column_" + std::to_string(i + 1));
  return names;
}

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> MakeCsvReader(
    std::shared_ptr<arrow::io::RandomAccessFile> file, const CsvOptions& options,
    arrow::csv::ConvertOptions convert, const std::vector<std::string>& names) {
  auto read = arrow::csv::ReadOptions::Defaults();
  read.use_threads = false;  // serial parsing names a bad row ("Row #N", counting the header)
  if (!options.has_header) read.column_names = names;
  convert.strings_can_be_null = true;
  convert.null_values = {""};  // only empty fields are null ("NA", "null", "NaN" stay strings)
  ARROW_ASSIGN_OR_RAISE(auto reader,
                        arrow::csv::StreamingReader::Make(arrow::io::default_io_context(), file, read,
                                                          CsvParseOptions(options), convert));
  return reader;
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Schema>> InferCsvSchema(const std::string& path,
                                                             const CsvOptions& options, const S3Config& s3) {
  std::vector<std::string> names;
  if (!options.has_header) {
    ARROW_ASSIGN_OR_RAISE(names, HeaderlessNames(path, options, s3));
  }
  ARROW_ASSIGN_OR_RAISE(auto file, OpenInputFile(path, s3));
  ARROW_ASSIGN_OR_RAISE(auto reader,
                        MakeCsvReader(file, options, arrow::csv::ConvertOptions::Defaults(), names));
  return reader->schema();
}

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenCsv(
    const std::string& path, const CsvOptions& options, const std::shared_ptr<arrow::Schema>& schema,
    const std::vector<std::string>& columns, const S3Config& s3, std::atomic<int64_t>* bytes_read) {
  ARROW_ASSIGN_OR_RAISE(auto file, OpenInputFile(path, s3, bytes_read));
  ARROW_ASSIGN_OR_RAISE(const int64_t size, file->GetSize());
  if (size == 0) {
    // A 0-byte file (not even a header: a shard without records) has no rows.
    arrow::FieldVector fields;
    for (const auto& name : columns) fields.push_back(schema->GetFieldByName(name));
    return arrow::RecordBatchReader::Make({}, arrow::schema(fields));
  }
  auto convert = arrow::csv::ConvertOptions::Defaults();
  for (const auto& field : schema->fields()) convert.column_types[field->name()] = field->type();
  convert.include_columns = columns;
  std::vector<std::string> names;
  for (const auto& field : schema->fields()) names.push_back(field->name());
  return MakeCsvReader(std::move(file), options, convert, names);
}

arrow::Result<std::shared_ptr<arrow::Schema>> InferJsonSchema(const std::string& path, const S3Config& s3) {
  ARROW_ASSIGN_OR_RAISE(auto file, OpenInputFile(path, s3));
  auto read = arrow::json::ReadOptions::Defaults();
  read.use_threads = false;
  ARROW_ASSIGN_OR_RAISE(
      auto reader, arrow::json::StreamingReader::Make(file, read, arrow::json::ParseOptions::Defaults()));
  return reader->schema();
}

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenJson(
    const std::string& path, const std::shared_ptr<arrow::Schema>& schema,
    const std::vector<std::string>& columns, const S3Config& s3, std::atomic<int64_t>* bytes_read) {
  ARROW_ASSIGN_OR_RAISE(auto file, OpenInputFile(path, s3, bytes_read));
  auto read = arrow::json::ReadOptions::Defaults();
  read.use_threads = true;
  auto parse = arrow::json::ParseOptions::Defaults();
  arrow::FieldVector fields;
  for (const auto& name : columns) {
    auto field = schema->GetFieldByName(name);
    if (!field) return arrow::Status::KeyError("column '", name, "' is not in the JSON schema");
    fields.push_back(field);
  }
  parse.explicit_schema = arrow::schema(fields);
  parse.unexpected_field_behavior = arrow::json::UnexpectedFieldBehavior::Ignore;
  // A file with no JSON values at all (empty, or blank lines only: a shard without records) has
  // no rows; Arrow's reader refuses such a stream.
  ARROW_ASSIGN_OR_RAISE(const int64_t size, file->GetSize());
  if (size <= 4096) {
    ARROW_ASSIGN_OR_RAISE(auto uncounted, OpenInputFile(path, s3));  // the check is not the scan's read
    ARROW_ASSIGN_OR_RAISE(auto head, uncounted->ReadAt(0, size));
    bool blank = true;
    for (int64_t i = 0; i < head->size() && blank; ++i) blank = std::isspace(head->data()[i]) != 0;
    if (blank) {
      ARROW_ASSIGN_OR_RAISE(auto empty, arrow::RecordBatchReader::Make({}, parse.explicit_schema));
      return empty;
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto reader, arrow::json::StreamingReader::Make(file, read, parse));
  return reader;
}

}  // namespace ketch::io
