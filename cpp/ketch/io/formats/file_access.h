#pragma once

#include <arrow/io/interfaces.h>
#include <arrow/result.h>

#include <atomic>
#include <memory>
#include <string>

#include "ketch/io/object_store.h"

namespace ketch::io {

/// Opens a local file or an `s3://bucket/key` object for random access (Arrow's ReadableFile or
/// S3FileSystem). When `bytes_read` is given, every byte the readers fetch is added to it (the scan
/// metrics' "bytes read"). `size_bytes` is the size the listing gave (-1: unknown): an S3 object
/// of known size opens without a HEAD request. Errors: IOError naming the path when it is missing
/// or unreadable.
arrow::Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenInputFile(
    const std::string& path, const S3Config& s3, std::atomic<int64_t>* bytes_read = nullptr,
    int64_t size_bytes = -1);

}  // namespace ketch::io
