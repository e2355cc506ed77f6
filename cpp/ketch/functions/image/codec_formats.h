#pragma once

// Per-format codec entry points behind codecs.h's Decode / Encode (one file per library).

#include <arrow/result.h>

#include <cstdint>
#include <vector>

#include "ketch/functions/image/codecs.h"

namespace ketch::image {

/// Shared header check: Invalid for an empty image, one over `limits.max_pixels` pixels, or one whose
/// decoded pixels (`channels` bytes each) need more than `limits.max_bytes`.
arrow::Status CheckImageSize(int64_t width, int64_t height, const DecodeLimits& limits, const char* format,
                             int channels = 4);

arrow::Result<DecodedImage> DecodeWebp(const uint8_t* data, int64_t size, DecodeLimits limits);
arrow::Result<DecodedImage> DecodeGif(const uint8_t* data, int64_t size, DecodeLimits limits);
arrow::Result<DecodedImage> DecodeBmp(const uint8_t* data, int64_t size, DecodeLimits limits);
arrow::Result<DecodedImage> DecodeTiff(const uint8_t* data, int64_t size, DecodeLimits limits);

arrow::Result<std::vector<uint8_t>> EncodePng(const ImageView& image);
arrow::Result<std::vector<uint8_t>> EncodeJpeg(const ImageView& image, int quality);
arrow::Result<std::vector<uint8_t>> EncodeWebp(const ImageView& image);
arrow::Result<std::vector<uint8_t>> EncodeTiff(const ImageView& image);

}  // namespace ketch::image
