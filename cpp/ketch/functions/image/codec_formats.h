#pragma once

// Per-format codec entry points behind codecs.h's Decode / Encode (one file per library).

#include <arrow/result.h>

#include <cstdint>
#include <vector>

#include "ketch/functions/image/codecs.h"

namespace ketch::image {

/// Shared header check: Invalid for an empty image or one over `max_pixels` pixels.
arrow::Status CheckImageSize(int64_t width, int64_t height, int64_t max_pixels, const char* format);

arrow::Result<DecodedImage> DecodeWebp(const uint8_t* data, int64_t size, int64_t max_pixels);
arrow::Result<DecodedImage> DecodeGif(const uint8_t* data, int64_t size, int64_t max_pixels);
arrow::Result<DecodedImage> DecodeBmp(const uint8_t* data, int64_t size, int64_t max_pixels);
arrow::Result<DecodedImage> DecodeTiff(const uint8_t* data, int64_t size, int64_t max_pixels);

arrow::Result<std::vector<uint8_t>> EncodePng(const ImageView& image);
arrow::Result<std::vector<uint8_t>> EncodeJpeg(const ImageView& image, int quality);
arrow::Result<std::vector<uint8_t>> EncodeWebp(const ImageView& image);
arrow::Result<std::vector<uint8_t>> EncodeTiff(const ImageView& image);

}  // namespace ketch::image
