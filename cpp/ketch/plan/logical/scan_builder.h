#pragma once

#include <arrow/api.h>

#include "ketch/plan/logical/scan_info.h"

namespace ketch {

/// Everything read_parquet / read_csv / read_json know before planning.
struct ScanRequest {
  FileFormat format = FileFormat::kParquet;
  std::vector<ScanFile> files;  ///< with partition values when hive-partitioned
  std::shared_ptr<arrow::Schema> partition_schema;
  CsvOptions csv;
  VideoScanOptions video;  ///< kVideo: the frames' size and selection (the schema follows from it)
  io::S3Config s3;
  /// The files' schema as given by the user (no inference); null = infer from the first file.
  std::shared_ptr<arrow::Schema> schema;
  /// Types that override inferred ones, by column name (Daft's schema_hints); null = none.
  std::shared_ptr<arrow::Schema> hints;
};

/// Builds the ScanInfo of a scan: infers the schema from the first file (Parquet footer, or
/// Arrow's CSV/JSON inference on its first block) unless given, applies the hints and appends the
/// partition columns. Errors: KeyError for a hint naming a column the files do not have; Invalid
/// for a partition column that is also stored in the files; IOError naming the first file when it
/// cannot be read or parsed.
arrow::Result<ScanInfo> BuildScan(ScanRequest request);

}  // namespace ketch
