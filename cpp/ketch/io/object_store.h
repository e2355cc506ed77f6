#pragma once

#include <arrow/buffer.h>
#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>

#include <memory>
#include <string>
#include <vector>

namespace ketch::io {

/// S3 connection settings (Python: ketch.io.S3Config). Empty fields take the AWS SDK's defaults
/// (environment variables, ~/.aws/config, instance metadata).
struct S3Config {
  std::string region;
  std::string endpoint_override;  ///< e.g. "127.0.0.1:9000" for MinIO or moto
  std::string scheme = "https";   ///< "http" for plain endpoints
  std::string key_id;
  std::string access_key;
  std::string session_token;
  bool anonymous = false;
  /// Cache key: configs with equal keys share one S3FileSystem (and its connection pool).
  std::string Key() const;
  /// The credentials (key id, access key, session token): what io::Redact masks in messages.
  std::vector<std::string> Secrets() const { return {key_id, access_key, session_token}; }
};

/// The S3 filesystem for `config` (Arrow's S3FileSystem over the AWS SDK), created once per
/// distinct config and cached; initializes Arrow's S3 support on first use.
arrow::Result<std::shared_ptr<arrow::fs::FileSystem>> S3FileSystemFor(const S3Config& config);

/// Reads a whole `s3://bucket/key` object. Errors: Invalid for a malformed URL; IOError naming
/// the object when it is missing or unreadable.
arrow::Result<std::shared_ptr<arrow::Buffer>> ReadS3Object(std::string_view url, const S3Config& config);

/// Reads at most `length` bytes from the start of an s3:// object (a ranged GET).
arrow::Result<std::shared_ptr<arrow::Buffer>> ReadS3Prefix(std::string_view url, int64_t length,
                                                           const S3Config& config);

/// Size in bytes of an s3:// object (a HEAD request).
arrow::Result<int64_t> S3ObjectSize(std::string_view url, const S3Config& config);

/// Writes `data` to `s3://bucket/key` (one PUT or multipart upload; S3 objects appear atomically).
arrow::Status WriteS3Object(std::string_view url, const uint8_t* data, int64_t size, const S3Config& config);

/// True for s3:// URLs.
bool IsS3Url(std::string_view url);

/// Shuts Arrow's S3 support down (before process exit; idempotent).
void FinalizeS3();

}  // namespace ketch::io
