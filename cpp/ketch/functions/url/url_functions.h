#pragma once

#include <arrow/status.h>

namespace ketch::url {

/// Registers url_download(urls: string; on_error: "raise"|"null", max_connections: int) → binary.
/// Reads local paths and file:// URLs through arrow::io on the I/O pool, up to max_connections
/// reads in flight. Errors name the row and the path. (http(s) and s3 arrive with issue 4.)
arrow::Status RegisterUrlFunctions();

}  // namespace ketch::url
