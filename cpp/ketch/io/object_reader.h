#pragma once

#include <arrow/buffer.h>
#include <arrow/result.h>

#include <memory>
#include <string_view>

#include "ketch/io/object_store.h"

namespace ketch::io {

/// Reads objects named by a URL, whatever the store: local paths and file:// URLs (arrow::io),
/// s3:// (Arrow's S3FileSystem with `s3`), http(s):// (libcurl). Blocking; callers run them on the
/// I/O pool. Errors: NotImplemented for other schemes; IOError naming the object otherwise.

/// The whole object.
arrow::Result<std::shared_ptr<arrow::Buffer>> ReadObject(std::string_view url, const S3Config& s3);
/// At most the first `length` bytes (a ranged read; the object is never read whole).
arrow::Result<std::shared_ptr<arrow::Buffer>> ReadObjectPrefix(std::string_view url, int64_t length,
                                                               const S3Config& s3);
/// The object's size in bytes (stat / HEAD; not available for http(s): NotImplemented).
arrow::Result<int64_t> ObjectSize(std::string_view url, const S3Config& s3);

/// The local path of a local path or file:// URL (file://localhost/ too); NotImplemented for
/// other schemes.
arrow::Result<std::string> LocalPath(std::string_view url);

}  // namespace ketch::io
