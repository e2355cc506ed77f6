#pragma once

#include <arrow/api.h>
#include <parquet/metadata.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "ketch/io/object_store.h"

namespace ketch::io {

/// Reads the footer of a Parquet file (one ranged read at the end of the file; `size_bytes` as
/// listed, -1 when unknown, which costs an S3 object a HEAD request first). IOError names the path
/// when the file is missing, truncated or not Parquet.
arrow::Result<std::shared_ptr<parquet::FileMetaData>> ReadParquetMetadata(const std::string& path,
                                                                          const S3Config& s3,
                                                                          int64_t size_bytes = -1);

/// The Arrow schema stored in a Parquet footer.
arrow::Result<std::shared_ptr<arrow::Schema>> ParquetArrowSchema(const parquet::FileMetaData& metadata);

/// Opens a reader over `row_groups` of a Parquet file (`size_bytes` long as listed, -1 when
/// unknown) whose footer was read already (no request for it again), decoding only
/// the top-level `columns` (by name; KeyError names a column missing from this file); batches of
/// `batch_rows` rows. `use_threads` decodes columns in parallel (Arrow's reader). Bytes fetched are
/// added to `bytes_read`. `read_dictionaries`: top-level string/binary columns whose pages are all
/// dictionary-encoded come back as Arrow dictionary arrays (the caller expands them).
arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenParquetRowGroups(
    const std::string& path, const S3Config& s3, int64_t size_bytes,
    std::shared_ptr<parquet::FileMetaData> metadata, const std::vector<int>& row_groups,
    const std::vector<std::string>& columns, int64_t batch_rows, bool use_threads,
    std::atomic<int64_t>* bytes_read, bool read_dictionaries = false);

/// Compressed bytes of the named top-level columns' chunks in one row group (all columns when
/// `columns` is empty): what reading them costs.
int64_t ParquetRowGroupBytes(const parquet::FileMetaData& metadata, int row_group,
                             const std::vector<std::string>& columns);

}  // namespace ketch::io
