#include "ketch/io/object_store.h"

#include <arrow/filesystem/s3fs.h>
#include <arrow/io/interfaces.h>

#include <algorithm>
#include <map>
#include <mutex>

namespace ketch::io {
namespace {

std::mutex& CacheMutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}

std::map<std::string, std::shared_ptr<arrow::fs::FileSystem>>& Cache() {
  static auto* cache = new std::map<std::string, std::shared_ptr<arrow::fs::FileSystem>>();
  return *cache;
}

arrow::Result<std::string> S3Path(std::string_view url) {
  constexpr std::string_view kScheme = "s3://";
  if (url.substr(0, kScheme.size()) != kScheme) return arrow::Status::Invalid("not an s3:// URL: ", url);
  std::string path(url.substr(kScheme.size()));
  if (path.empty() || path.front() == '/' || path.find('/') == std::string::npos || path.back() == '/') {
    return arrow::Status::Invalid("malformed S3 URL '", url, "' (expected s3://bucket/key)");
  }
  return path;
}

}  // namespace

std::string S3Config::Key() const {
  return region + '\n' + endpoint_override + '\n' + scheme + '\n' + key_id + '\n' + access_key + '\n' +
         session_token + '\n' + (anonymous ? "anon" : "");
}

bool IsS3Url(std::string_view url) { return url.substr(0, 5) == "s3://"; }

arrow::Result<std::shared_ptr<arrow::fs::FileSystem>> S3FileSystemFor(const S3Config& config) {
  std::lock_guard<std::mutex> lock(CacheMutex());
  auto it = Cache().find(config.Key());
  if (it != Cache().end()) return it->second;
  ARROW_RETURN_NOT_OK(arrow::fs::EnsureS3Initialized());
  arrow::fs::S3Options options;
  if (config.anonymous) {
    options = arrow::fs::S3Options::Anonymous();
  } else if (!config.key_id.empty()) {
    options = arrow::fs::S3Options::FromAccessKey(config.key_id, config.access_key, config.session_token);
  } else {
    options = arrow::fs::S3Options::Defaults();
  }
  if (!config.region.empty()) options.region = config.region;
  if (!config.endpoint_override.empty()) options.endpoint_override = config.endpoint_override;
  if (!config.scheme.empty()) options.scheme = config.scheme;
  ARROW_ASSIGN_OR_RAISE(auto fs, arrow::fs::S3FileSystem::Make(options));
  std::shared_ptr<arrow::fs::FileSystem> out = fs;
  Cache()[config.Key()] = out;
  return out;
}

arrow::Result<std::shared_ptr<arrow::Buffer>> ReadS3Object(std::string_view url, const S3Config& config) {
  ARROW_ASSIGN_OR_RAISE(auto path, S3Path(url));
  ARROW_ASSIGN_OR_RAISE(auto fs, S3FileSystemFor(config));
  ARROW_ASSIGN_OR_RAISE(auto file, fs->OpenInputFile(path));
  ARROW_ASSIGN_OR_RAISE(auto size, file->GetSize());
  ARROW_ASSIGN_OR_RAISE(auto buffer, file->ReadAt(0, size));
  ARROW_RETURN_NOT_OK(file->Close());
  return buffer;
}

arrow::Result<std::shared_ptr<arrow::Buffer>> ReadS3Prefix(std::string_view url, int64_t length,
                                                           const S3Config& config) {
  ARROW_ASSIGN_OR_RAISE(auto path, S3Path(url));
  ARROW_ASSIGN_OR_RAISE(auto fs, S3FileSystemFor(config));
  ARROW_ASSIGN_OR_RAISE(auto file, fs->OpenInputFile(path));
  ARROW_ASSIGN_OR_RAISE(auto size, file->GetSize());
  return file->ReadAt(0, std::min(size, length));
}

arrow::Result<int64_t> S3ObjectSize(std::string_view url, const S3Config& config) {
  ARROW_ASSIGN_OR_RAISE(auto path, S3Path(url));
  ARROW_ASSIGN_OR_RAISE(auto fs, S3FileSystemFor(config));
  ARROW_ASSIGN_OR_RAISE(auto info, fs->GetFileInfo(path));
  if (info.type() != arrow::fs::FileType::File) return arrow::Status::IOError("no such S3 object: ", url);
  return info.size();
}

arrow::Status WriteS3Object(std::string_view url, const uint8_t* data, int64_t size, const S3Config& config) {
  ARROW_ASSIGN_OR_RAISE(auto path, S3Path(url));
  ARROW_ASSIGN_OR_RAISE(auto fs, S3FileSystemFor(config));
  ARROW_ASSIGN_OR_RAISE(auto out, fs->OpenOutputStream(path));
  ARROW_RETURN_NOT_OK(out->Write(data, size));
  return out->Close();
}

void FinalizeS3() {
  {
    std::lock_guard<std::mutex> lock(CacheMutex());
    Cache().clear();
  }
  (void)arrow::fs::EnsureS3Finalized();
}

}  // namespace ketch::io
