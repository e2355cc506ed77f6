#include "ketch/plan/logical/scan_builder.h"

#include <set>

#include "ketch/functions/media/video_scan.h"
#include "ketch/io/formats/parquet_footers.h"
#include "ketch/io/formats/parquet_format.h"
#include "ketch/io/formats/text_formats.h"

namespace ketch {
namespace {

arrow::Result<std::shared_ptr<arrow::Schema>> InferSchema(const ScanRequest& request,
                                                          io::ParquetFooters* footers) {
  const std::string& path = request.files.at(0).path;
  switch (request.format) {
    case FileFormat::kParquet: {
      // Kept: planning and the scan use this footer again without fetching it.
      ARROW_ASSIGN_OR_RAISE(auto metadata, footers->Get(0, path, request.files[0].size_bytes, request.s3));
      return io::ParquetArrowSchema(*metadata);
    }
    case FileFormat::kCsv:
      return io::InferCsvSchema(path, request.csv, request.s3);
    case FileFormat::kJson:
      return io::InferJsonSchema(path, request.s3);
    case FileFormat::kLance:  // read_lance builds its scan from the dataset's own schema
      break;
    case FileFormat::kVideo:  // fixed by the options; no file is opened before the query runs
      ARROW_RETURN_NOT_OK(media::VideoScanFrameOptions(request.video).status());
      return media::VideoFramesSchema(request.video.image_height, request.video.image_width);
  }
  return arrow::Status::NotImplemented("unknown file format");
}

}  // namespace

arrow::Result<ScanInfo> BuildScan(ScanRequest request) {
  const std::string reader = "read_" + std::string(request.format == FileFormat::kParquet ? "parquet"
                                                   : request.format == FileFormat::kCsv   ? "csv"
                                                   : request.format == FileFormat::kVideo ? "video_frames"
                                                                                          : "json");
  if (request.format == FileFormat::kVideo) {
    // The schema follows from the options: bad options are the user's error, not the file's.
    auto checked = media::VideoScanFrameOptions(request.video);
    if (!checked.ok()) return checked.status().WithMessage(reader, ": ", checked.status().message());
    if (request.schema || request.hints ||
        (request.partition_schema && request.partition_schema->num_fields())) {
      return arrow::Status::Invalid(reader, ": takes no schema, schema hints or hive partitions");
    }
  }
  if (request.files.empty()) return arrow::Status::Invalid(reader, ": no files to read");
  std::shared_ptr<arrow::Schema> schema = request.schema;
  std::shared_ptr<io::ParquetFooters> footers;
  if (request.format == FileFormat::kParquet) {
    footers = std::make_shared<io::ParquetFooters>(request.files.size());
  }
  if (!schema) {
    auto inferred = InferSchema(request, footers.get());
    if (!inferred.ok()) {
      return arrow::Status::IOError(reader, ": file '", request.files[0].path,
                                    "': cannot read its schema: ", inferred.status().message());
    }
    schema = *inferred;
  }
  const std::shared_ptr<arrow::Schema> parse_schema = schema;
  {
    std::set<std::string> seen;
    for (const auto& field : schema->fields()) {
      if (!seen.insert(field->name()).second) {
        return arrow::Status::Invalid(
            reader, ": file '", request.files[0].path, "': column name '", field->name(),
            "' appears more than once; rename it",
            request.format == FileFormat::kCsv
                ? " (or read with has_headers=False and name the columns with schema=)"
                : "");
      }
    }
  }
  if (request.hints) {
    arrow::FieldVector fields = schema->fields();
    for (const auto& hint : request.hints->fields()) {
      const int i = schema->GetFieldIndex(hint->name());
      if (i < 0) {
        return arrow::Status::KeyError(reader, ": schema hint for column '", hint->name(),
                                       "', which the files do not have (columns: ", schema->ToString(), ")");
      }
      fields[i] = fields[i]->WithType(hint->type());
    }
    schema = arrow::schema(fields);
  }
  if (!request.partition_schema) request.partition_schema = arrow::schema({});
  arrow::FieldVector fields = schema->fields();
  for (const auto& field : request.partition_schema->fields()) {
    if (schema->GetFieldIndex(field->name()) >= 0) {
      return arrow::Status::Invalid(reader, ": hive partition column '", field->name(),
                                    "' is also a column stored in the files");
    }
    fields.push_back(field);
  }
  for (const auto& file : request.files) {
    if (file.partition_values.size() != static_cast<size_t>(request.partition_schema->num_fields())) {
      return arrow::Status::Invalid(reader, ": file '", file.path, "' has ", file.partition_values.size(),
                                    " partition values, expected ", request.partition_schema->num_fields());
    }
  }
  ScanInfo info;
  info.format = request.format;
  info.files = std::move(request.files);
  info.file_schema = arrow::schema(fields);
  info.partition_schema = std::move(request.partition_schema);
  if (request.format == FileFormat::kJson) info.parse_schema = parse_schema;
  info.csv = request.csv;
  info.video = request.video;
  info.s3 = std::move(request.s3);
  info.footers = std::move(footers);
  return info;
}

}  // namespace ketch
