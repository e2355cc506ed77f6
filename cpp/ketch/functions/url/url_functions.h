#pragma once

#include <arrow/status.h>

#include "ketch/expr/function_registry.h"
#include "ketch/io/http_client.h"
#include "ketch/io/object_store.h"

namespace ketch::url {

/// Registers:
/// - url_download(urls: string; on_error: "raise"|"null", max_connections: int, s3_* options)
///   → large_binary. Local paths and file:// through arrow::io on the I/O pool, http(s):// through
///   libcurl's multi interface, s3:// through Arrow's S3FileSystem; up to max_connections in
///   flight. Errors name the row and the URL.
/// - url_upload(data: binary; location: string, on_error, s3_* options) → large_string: writes
///   each row's bytes to a new object under `location` (a local directory, file:// or s3://
///   prefix) and returns its path. Local files appear atomically (temporary name, then rename).
arrow::Status RegisterUrlFunctions();

/// The S3 settings carried by a call's options (s3_region, s3_endpoint_override, s3_scheme,
/// s3_key_id, s3_access_key, s3_session_token, s3_anonymous = "true").
arrow::Result<io::S3Config> S3ConfigFromOptions(const FunctionOptions& options);

/// The HTTP settings carried by a call's options (http_connect_timeout_ms, http_low_speed_timeout_s,
/// http_max_object_bytes, http_max_attempts; from ketch.io.HTTPConfig), over HttpOptions' defaults.
/// `function` names the call in errors.
arrow::Result<io::HttpOptions> HttpOptionsFromOptions(const FunctionOptions& options,
                                                      const std::string& function);

arrow::Status RegisterUrlUpload();

}  // namespace ketch::url
