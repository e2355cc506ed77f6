#include "ketch/functions/file/mime_sniff.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace ketch::file {
namespace {

bool StartsWith(const uint8_t* data, int64_t size, const char* magic, int64_t n, int64_t at = 0) {
  return size >= at + n && std::memcmp(data + at, magic, n) == 0;
}

// Printable ASCII / UTF-8 text (tabs and newlines allowed, no NUL or other control bytes).
bool LooksLikeText(const uint8_t* data, int64_t size) {
  for (int64_t i = 0; i < size; ++i) {
    const uint8_t c = data[i];
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') return false;
    if (c == 0x7F) return false;
  }
  return true;
}

}  // namespace

std::string SniffMimeType(const uint8_t* data, int64_t size) {
  if (size == 0) return "application/x-empty";
  if (StartsWith(data, size, "\x89PNG\r\n\x1a\n", 8)) return "image/png";
  if (StartsWith(data, size, "\xFF\xD8\xFF", 3)) return "image/jpeg";
  if (StartsWith(data, size, "GIF87a", 6) || StartsWith(data, size, "GIF89a", 6)) return "image/gif";
  if (StartsWith(data, size, "RIFF", 4) && StartsWith(data, size, "WEBP", 4, 8)) return "image/webp";
  if (StartsWith(data, size, "RIFF", 4) && StartsWith(data, size, "WAVE", 4, 8)) return "audio/wav";
  if (StartsWith(data, size, "RIFF", 4) && StartsWith(data, size, "AVI ", 4, 8)) return "video/x-msvideo";
  if (StartsWith(data, size, "II*\0", 4) || StartsWith(data, size, "MM\0*", 4)) return "image/tiff";
  if (StartsWith(data, size, "BM", 2) && size >= 14) return "image/bmp";
  if (StartsWith(data, size, "%PDF-", 5)) return "application/pdf";
  if (StartsWith(data, size, "PK\x03\x04", 4)) return "application/zip";
  if (StartsWith(data, size, "\x1F\x8B", 2)) return "application/gzip";
  if (StartsWith(data, size, "PAR1", 4)) return "application/vnd.apache.parquet";
  if (StartsWith(data, size, "fLaC", 4)) return "audio/flac";
  if (StartsWith(data, size, "OggS", 4)) return "audio/ogg";
  if (StartsWith(data, size, "ID3", 3)) return "audio/mpeg";
  if (size >= 2 && data[0] == 0xFF && (data[1] & 0xE0) == 0xE0 && (data[1] & 0x06) != 0) return "audio/mpeg";
  if (StartsWith(data, size, "ftyp", 4, 4)) {
    if (StartsWith(data, size, "M4A ", 4, 8)) return "audio/mp4";
    return StartsWith(data, size, "qt  ", 4, 8) ? "video/quicktime" : "video/mp4";
  }
  if (StartsWith(data, size, "\x1A\x45\xDF\xA3", 4)) {
    // EBML: Matroska unless the header's DocType says "webm".
    const std::string_view head(reinterpret_cast<const char*>(data),
                                static_cast<size_t>(std::min<int64_t>(size, 64)));
    return head.find("matroska") != std::string_view::npos ? "video/x-matroska" : "video/webm";
  }
  if (LooksLikeText(data, size)) return "text/plain";
  return "application/octet-stream";
}

}  // namespace ketch::file
