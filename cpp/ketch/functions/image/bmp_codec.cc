// BMP through stb_image (Debian's libstb shared library): header first (size check), then pixels in
// the file's channel count (1 → L, 2 → LA, 3 → RGB, 4 → RGBA).

#include <stb_image.h>

#include <cstring>
#include <memory>

#include "ketch/functions/image/codec_formats.h"

namespace ketch::image {
namespace {

uint32_t ReadLe(const uint8_t* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A palette BMP (<= 8 bits per pixel) whose palette is all grays: Pillow opens it as mode L.
bool HasGrayPalette(const uint8_t* data, int64_t size) {
  if (size < 54) return false;
  const uint32_t header = ReadLe(data + 14, 4);
  const uint32_t bits = ReadLe(data + 28, 2);
  if (header < 40 || bits > 8 || bits == 0) return false;
  uint32_t colors = ReadLe(data + 46, 4);
  if (colors == 0) colors = 1u << bits;
  const int64_t palette = 14 + static_cast<int64_t>(header);
  if (palette + 4 * static_cast<int64_t>(colors) > size) return false;
  for (uint32_t c = 0; c < colors; ++c) {
    const uint8_t* e = data + palette + 4 * c;
    if (e[0] != e[1] || e[1] != e[2]) return false;
  }
  return true;
}

// 32 bits per pixel without bit-field masks (BI_RGB): the 4th byte is reserved, not alpha (as Pillow
// reads it).
bool ReservedFourthByte(const uint8_t* data, int64_t size) {
  if (size < 54) return false;
  return ReadLe(data + 14, 4) >= 40 && ReadLe(data + 28, 2) == 32 && ReadLe(data + 30, 4) == 0;
}

}  // namespace

arrow::Result<DecodedImage> DecodeBmp(const uint8_t* data, int64_t size, int64_t max_pixels) {
  if (size > INT32_MAX) return arrow::Status::Invalid("BMP file too large (", size, " bytes)");
  const int len = static_cast<int>(size);
  int width = 0, height = 0, channels = 0;
  if (!stbi_info_from_memory(data, len, &width, &height, &channels)) {
    return arrow::Status::Invalid("corrupt BMP: ", stbi_failure_reason());
  }
  ARROW_RETURN_NOT_OK(CheckImageSize(width, height, max_pixels, "BMP"));
  std::unique_ptr<stbi_uc, decltype(&stbi_image_free)> pixels(
      stbi_load_from_memory(data, len, &width, &height, &channels, 0), &stbi_image_free);
  if (!pixels) return arrow::Status::Invalid("corrupt or truncated BMP: ", stbi_failure_reason());
  if (channels < 1 || channels > 4) return arrow::Status::Invalid("BMP with ", channels, " channels");
  DecodedImage out;
  out.width = width;
  out.height = height;
  out.mode = static_cast<ImageMode>(channels);
  out.pixels.assign(pixels.get(), pixels.get() + static_cast<size_t>(width) * height * channels);
  if (channels == 3 && HasGrayPalette(data, size)) return ConvertMode(out.view(), ImageMode::kL);
  if (channels == 4 && ReservedFourthByte(data, size)) return ConvertMode(out.view(), ImageMode::kRGB);
  return out;
}

}  // namespace ketch::image
