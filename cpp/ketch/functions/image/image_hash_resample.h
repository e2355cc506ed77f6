#pragma once

// Pillow-exact grayscale conversion and Lanczos resize, the two steps every imagehash hash starts
// with (`image.convert("L").resize((w, h), Image.LANCZOS)`).

#include <cstdint>
#include <vector>

#include "ketch/types/image_array.h"

namespace ketch::image {

/// A row-major 8-bit grayscale image.
struct GrayImage {
  int32_t width = 0;
  int32_t height = 0;
  std::vector<uint8_t> pixels;  // height * width
};

/// Pillow's `convert("L")`: L and LA keep their L channel; RGB and RGBA use ITU-R 601-2 luma in
/// Pillow's fixed point, L = (R * 19595 + G * 38470 + B * 7471 + 0x8000) >> 16 (alpha ignored).
GrayImage ToPillowGray(const ImageView& view);

/// Pillow's `resize((width, height), Image.LANCZOS)` of an 8-bit image (Resample.c): separable
/// Lanczos-3 with support scaled by the downscale factor, coefficients normalised then rounded to
/// 22-bit fixed point; two passes, each rounded and clipped to uint8, in Pillow 13's order
/// (see the .cc).
/// Returns a copy when the size is unchanged; width, height > 0.
GrayImage PillowLanczosResize(const GrayImage& in, int32_t width, int32_t height);

}  // namespace ketch::image
