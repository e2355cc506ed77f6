#include "ketch/io/object_reader.h"

#include <arrow/buffer_builder.h>
#include <arrow/io/file.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "ketch/io/http_client.h"

namespace ketch::io {

arrow::Result<std::string> LocalPath(std::string_view url) {
  constexpr std::string_view kFile = "file://";
  if (url.substr(0, kFile.size()) == kFile) {
    auto rest = url.substr(kFile.size());
    constexpr std::string_view kLocalhost = "localhost/";
    if (rest.substr(0, kLocalhost.size()) == kLocalhost) rest.remove_prefix(kLocalhost.size() - 1);
    return std::string(rest);
  }
  auto scheme = url.find("://");
  if (scheme != std::string_view::npos) {
    return arrow::Status::NotImplemented(
        "URL scheme '", std::string(url.substr(0, scheme)),
        "' is not supported (local paths, file://, http(s):// and s3:// are)");
  }
  return std::string(url);
}

namespace {

arrow::Result<std::shared_ptr<arrow::io::ReadableFile>> OpenLocal(std::string_view url) {
  ARROW_ASSIGN_OR_RAISE(auto path, LocalPath(url));
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    // A FIFO or device would block or never end; a directory cannot be read.
    return arrow::Status::IOError("'", path, "' is not a regular file");
  }
  return arrow::io::ReadableFile::Open(path);
}

// Reads up to `limit` bytes (< 0: all). Pseudo-files (/proc, /sys) report size 0 but have
// content, so a file whose size reads as 0 is read until end of file instead of trusted.
arrow::Result<std::shared_ptr<arrow::Buffer>> ReadLocal(std::string_view url, int64_t limit) {
  ARROW_ASSIGN_OR_RAISE(auto file, OpenLocal(url));
  ARROW_ASSIGN_OR_RAISE(auto size, file->GetSize());
  std::shared_ptr<arrow::Buffer> buffer;
  if (size > 0) {
    ARROW_ASSIGN_OR_RAISE(buffer, file->ReadAt(0, limit < 0 ? size : std::min(size, limit)));
  } else {
    constexpr int64_t kChunk = 64 * 1024;
    arrow::BufferBuilder builder;
    while (limit < 0 || builder.length() < limit) {
      const int64_t want = limit < 0 ? kChunk : std::min(kChunk, limit - builder.length());
      ARROW_ASSIGN_OR_RAISE(auto chunk, file->Read(want));
      if (chunk->size() == 0) break;
      ARROW_RETURN_NOT_OK(builder.Append(chunk->data(), chunk->size()));
    }
    ARROW_ASSIGN_OR_RAISE(buffer, builder.Finish());
  }
  ARROW_RETURN_NOT_OK(file->Close());
  return buffer;
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Buffer>> ReadObject(std::string_view url, const S3Config& s3) {
  if (IsS3Url(url)) return ReadS3Object(url, s3);
  if (IsHttpUrl(url)) {
    auto results = HttpGetAll({std::string(url)}, HttpOptions{});
    return std::move(results[0]);
  }
  return ReadLocal(url, -1);
}

arrow::Result<std::shared_ptr<arrow::Buffer>> ReadObjectPrefix(std::string_view url, int64_t length,
                                                               const S3Config& s3) {
  if (IsS3Url(url)) return ReadS3Prefix(url, length, s3);
  if (IsHttpUrl(url)) {
    HttpOptions options;
    options.max_bytes = length;
    auto results = HttpGetAll({std::string(url)}, options);
    return std::move(results[0]);
  }
  return ReadLocal(url, length);
}

arrow::Result<int64_t> ObjectSize(std::string_view url, const S3Config& s3) {
  if (IsS3Url(url)) return S3ObjectSize(url, s3);
  if (IsHttpUrl(url)) {
    auto sizes = HttpSizeAll({std::string(url)}, HttpOptions{});
    return std::move(sizes[0]);
  }
  ARROW_ASSIGN_OR_RAISE(auto file, OpenLocal(url));
  return file->GetSize();
}

}  // namespace ketch::io
