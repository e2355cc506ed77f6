#pragma once

#include <arrow/status.h>

namespace ketch::image {

/// Registers image_decode, image_resize with the global function registry:
/// - image_decode(bytes: binary | large_binary; mode: string|null, on_error: "raise"|"null")
///   → Image[mode] (Image[MIXED] when mode is null). Errors name the row and the cause.
/// - image_resize(img: Image | FixedShapeImage; width, height: int > 0)
///   → FixedShapeImage[mode; height x width] when the input type has a mode, else Image[MIXED].
arrow::Status RegisterImageFunctions();

/// Largest pixel count a decoder accepts (refused from the header, before allocation).
constexpr int64_t kMaxImagePixels = int64_t{1} << 28;

}  // namespace ketch::image
