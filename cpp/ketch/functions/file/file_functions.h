#pragma once

#include <arrow/status.h>

namespace ketch::file {

/// Registers the File column kernels (each takes one File argument and the io options s3_*):
/// - file_path → large_utf8: the reference itself, nothing read.
/// - file_size → int64 bytes: the size recorded when the column was made, else a stat / HEAD.
/// - file_guess_mime_type → utf8: from the first 64 bytes (one ranged read), see SniffMimeType.
/// - file_read → large_binary: the whole object (on the I/O pool, up to 32 reads in flight).
/// Errors name the row and the path; on_error="null" yields nulls instead.
arrow::Status RegisterFileFunctions();

/// bytes_guess_mime_type (Daft's functions.guess_mime_type over binary): bytes_mime_function.cc.
arrow::Status RegisterBytesMimeFunction();

}  // namespace ketch::file
