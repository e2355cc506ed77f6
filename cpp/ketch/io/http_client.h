#pragma once

#include <arrow/buffer.h>
#include <arrow/result.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace ketch::io {

/// Options of one batch of HTTP(S) GETs.
struct HttpOptions {
  int32_t max_connections = 32;  ///< requests in flight at once (libcurl's connection limit)
  int32_t max_attempts = 3;      ///< per URL: connection errors, timeouts, HTTP 429 and 5xx are retried
  int64_t connect_timeout_ms = 10'000;
  /// Largest object accepted, in bytes (a response beyond it fails: endless or bomb bodies).
  int64_t max_object_bytes = int64_t{2} << 30;
  /// Polled while transfers run: true aborts them all with Cancelled (Ctrl-C).
  const std::atomic<bool>* cancelled = nullptr;
  int64_t low_speed_timeout_s = 30;  ///< abort a transfer that moves < 1 KiB/s for this long
  /// > 0: only the first max_bytes bytes are wanted (a Range request; if the server ignores it,
  /// the transfer stops once that many bytes arrived).
  int64_t max_bytes = -1;
  /// HEAD requests instead of GETs (HttpSizeAll).
  bool head_only = false;
};

/// Downloads every URL with libcurl's multi interface: one thread drives all transfers (many
/// requests in flight, not a thread per request); connections are kept alive and reused across
/// calls (multi handles are pooled, each with its own connection cache); redirects are followed
/// (at most 10, http and https only). A transfer slower than 1 KiB/s over `low_speed_timeout_s`
/// is aborted and retried like a reset connection. Returns one result per URL, in order: the body, or IOError
/// naming the HTTP status (e.g. "HTTP 404") or libcurl's error (connection refused, reset, timeout).
std::vector<arrow::Result<std::shared_ptr<arrow::Buffer>>> HttpGetAll(const std::vector<std::string>& urls,
                                                                      const HttpOptions& options);

/// The size in bytes of each URL's object from a HEAD request's Content-Length (redirects
/// followed, retried as HttpGetAll). IOError naming the HTTP status, libcurl's error, or a
/// response without a Content-Length.
std::vector<arrow::Result<int64_t>> HttpSizeAll(const std::vector<std::string>& urls, HttpOptions options);

/// True for http:// and https:// URLs (case-insensitive scheme).
bool IsHttpUrl(std::string_view url);

}  // namespace ketch::io
