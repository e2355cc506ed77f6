#pragma once

#include <cstdint>
#include <string>

namespace ketch::file {

/// Bytes of an object's head that SniffMimeType looks at.
constexpr int64_t kSniffBytes = 64;

/// The MIME type told by an object's first bytes (magic numbers, as libmagic and the WHATWG MIME
/// sniffing standard list them), never by its name: image/png, image/jpeg, image/gif, image/webp,
/// image/tiff, image/bmp, application/pdf, application/zip, application/gzip,
/// application/vnd.apache.parquet, audio/wav, audio/mpeg, audio/flac, audio/ogg, audio/mp4 (an
/// M4A brand), video/mp4, video/quicktime, video/webm, video/x-matroska, video/x-msvideo (AVI),
/// text/plain (printable UTF-8); application/x-empty for 0 bytes;
/// application/octet-stream otherwise.
std::string SniffMimeType(const uint8_t* data, int64_t size);

}  // namespace ketch::file
