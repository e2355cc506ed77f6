#pragma once

#include <arrow/status.h>

namespace ketch::image {

/// Registers image_decode, image_resize with the global function registry:
/// - image_decode(bytes: binary | large_binary; mode: string|null, on_error: "raise"|"null")
///   → Image[mode] (Image[MIXED] when mode is null). Errors name the row and the cause.
/// - image_resize(img: Image | FixedShapeImage; width, height: int > 0)
///   → FixedShapeImage[mode; height x width] when the input type has a mode, else Image[MIXED].
/// Also registers (each in its own file):
/// - image_encode(img; format: "PNG"|"JPEG"|"WEBP"|"TIFF", quality: int = 75) → large_binary
/// - image_crop(img[, bbox: list<int> [x, y, w, h]]; or options x, y, w, h) → Image[mode]
/// - image_to_mode(img; mode) → Image[mode], FixedShapeImage[mode; h x w] for fixed-shape input
/// - image_width / image_height / image_channels → int64, image_mode → string
arrow::Status RegisterImageFunctions();
arrow::Status RegisterImageEncode();
arrow::Status RegisterImageTransforms();
arrow::Status RegisterImageProperties();
/// image_hash_imagehash(img; algorithm: "average"|"difference"|"perceptual"|"wavelet",
/// hash_size: int = 8) → fixed_size_binary(ceil(hash_size^2 / 8)), bit-identical to imagehash 4.3.2
/// (image_hash.cc).
arrow::Status RegisterImageHash();
/// image_hash(img; method: "phash"|"phash_simple"|"dhash"|"dhash_vertical"|"ahash"|"whash"|
/// "crop_resistant"|"colorhash" = "phash", hash_size = 8, binbits = 3, segments = 3)
/// → fixed_size_binary(n) with Daft 0.7.26's layout and values (image_hash_daft.cc).
arrow::Status RegisterImageHashDaft();

/// Largest pixel count a decoder accepts (refused from the header, before allocation).
/// Pillow's decompression-bomb error threshold (2 x Image.MAX_IMAGE_PIXELS): 178,956,970 pixels,
/// e.g. about 13,377 x 13,377; an RGBA image that size is 716 MB.
constexpr int64_t kMaxImagePixels = 2 * (int64_t{1024} * 1024 * 1024 / 4 / 3);

}  // namespace ketch::image
