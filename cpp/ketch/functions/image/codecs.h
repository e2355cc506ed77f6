#pragma once

#include <arrow/result.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ketch/types/image_array.h"

namespace ketch::image {

/// A decoded image that owns its pixels (HWC, 8 bits per channel).
struct DecodedImage {
  std::vector<uint8_t> pixels;
  int32_t height = 0;
  int32_t width = 0;
  ImageMode mode = ImageMode::kRGB;
  ImageView view() const { return ImageView{pixels.data(), height, width, mode}; }
};

/// What a decoder may allocate: at most `max_pixels` pixels and `max_bytes` bytes of decoded pixels
/// (the query's memory budget). Both are checked from the header, before any pixel buffer exists.
/// Converts from a pixel count (no byte limit).
struct DecodeLimits {
  DecodeLimits(int64_t max_pixels) : max_pixels(max_pixels) {}  // NOLINT(runtime/explicit)
  DecodeLimits(int64_t max_pixels, int64_t max_bytes) : max_pixels(max_pixels), max_bytes(max_bytes) {}
  int64_t max_pixels;
  int64_t max_bytes = INT64_MAX;
};

/// Image file formats. Decoding sniffs the format from magic bytes (never from a file name).
enum class ImageFormat { kUnknown, kPng, kJpeg, kWebp, kGif, kTiff, kBmp };
ImageFormat SniffFormat(const uint8_t* data, int64_t size);
/// "PNG", "JPEG", "WEBP", "GIF", "TIFF", "BMP".
std::string FormatName(ImageFormat format);
/// Case-insensitive "png", "jpeg"/"jpg", "webp", "gif", "tiff"/"tif", "bmp"; Invalid otherwise.
arrow::Result<ImageFormat> ParseFormat(const std::string& name);

/// Decodes PNG (libpng), JPEG (libjpeg-turbo's TurboJPEG API), WebP (libwebp), GIF (giflib; first
/// frame), TIFF (libtiff) or BMP (stb_image) bytes into their native mode (L, LA, RGB or RGBA; 16-bit samples
/// are reduced to 8 bits). Images whose header declares more than `limits` allow (pixels, or decoded
/// bytes) are refused before any pixel buffer is allocated. Errors: Invalid for unknown formats, corrupt or
/// truncated data, oversize headers.
arrow::Result<DecodedImage> Decode(const uint8_t* data, int64_t size, DecodeLimits limits);

/// What a JPEG decodes to, read from its header alone: size, mode (L or RGB) and whether it holds
/// CMYK (which only Decode handles). Invalid for a corrupt header or one over `limits`.
struct JpegHeader {
  int32_t width = 0;
  int32_t height = 0;
  ImageMode mode = ImageMode::kRGB;
  bool cmyk = false;
  int64_t num_bytes() const { return int64_t{width} * height * ModeChannels(mode); }
};
arrow::Result<JpegHeader> ReadJpegHeader(const uint8_t* data, int64_t size, DecodeLimits limits);

/// `header` reduced for a decode whose pixels will be resized to `target_width` x
/// `target_height`: libjpeg-turbo scales in the DCT by 1/2, 1/4 or 1/8 at almost no cost (the
/// shrink-on-load of Pillow's `Image.thumbnail` and libvips' `thumbnail`). The factor is what
/// Pillow's thumbnail asks `Image.draft` for (reducing_gap=2.0): the largest of 8, 4, 2 (else 1)
/// that is at most min(width / (2 * target_width), height / (2 * target_height)), so the reduced
/// image stays at least twice the target on both axes and the bilinear resize that follows
/// still antialiases (within 3 levels, mean, of a full-size decode). The reduced size is
/// TurboJPEG's TJSCALED (rounded up).
JpegHeader ShrinkOnLoad(const JpegHeader& header, int32_t target_width, int32_t target_height);

/// Decodes a non-CMYK JPEG straight into `dst` (header.num_bytes() bytes, HWC) with libjpeg-turbo:
/// the fast path of image_decode, no intermediate buffer. A header reduced by ShrinkOnLoad decodes at
/// its reduced size (DCT scaling). Errors as Decode's.
arrow::Status DecodeJpegInto(const uint8_t* data, int64_t size, const JpegHeader& header, uint8_t* dst);

/// Encodes HWC pixels: PNG (lossless), JPEG (`quality` 1-100, 4:2:0 chroma subsampling like
/// Pillow's default; L and RGB only), WebP (lossless; L/LA widened to RGB/RGBA), TIFF (LZW).
/// Errors: Invalid when the format cannot hold the mode (JPEG with alpha); NotImplemented for
/// GIF and BMP.
arrow::Result<std::vector<uint8_t>> Encode(const ImageView& image, ImageFormat format, int quality);

/// Converts between modes the way Pillow does (L = R*299/1000 + G*587/1000 + B*114/1000; alpha
/// added as 255, dropped when the target has none).
DecodedImage ConvertMode(const ImageView& image, ImageMode target);

/// Resizes with Pillow's BILINEAR filter: a separable triangle filter whose support grows with the
/// downscale factor (antialiasing), horizontal pass then vertical, rounded to 8 bits after each pass
/// (Pillow's Resample.c, ImagingResample, in its fixed-point arithmetic); LA and RGBA are resized with
/// premultiplied alpha, as Pillow does. `dst` must hold out_h*out_w*channels bytes.
void ResizeBilinear(const ImageView& src, int32_t out_width, int32_t out_height, uint8_t* dst);

}  // namespace ketch::image
