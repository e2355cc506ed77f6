// WebP through libwebp (decode: WebPDecodeRGB(A)Into; encode: lossless with exact RGB, WebPEncode).

#include <webp/decode.h>
#include <webp/encode.h>

#include "ketch/functions/image/codec_formats.h"

namespace ketch::image {

arrow::Result<DecodedImage> DecodeWebp(const uint8_t* data, int64_t size, int64_t max_pixels) {
  WebPBitstreamFeatures features;
  if (WebPGetFeatures(data, static_cast<size_t>(size), &features) != VP8_STATUS_OK) {
    return arrow::Status::Invalid("corrupt WebP: cannot read the header");
  }
  ARROW_RETURN_NOT_OK(CheckImageSize(features.width, features.height, max_pixels, "WebP"));
  DecodedImage out;
  out.width = features.width;
  out.height = features.height;
  out.mode = features.has_alpha ? ImageMode::kRGBA : ImageMode::kRGB;
  const int channels = features.has_alpha ? 4 : 3;
  const int stride = out.width * channels;
  out.pixels.resize(static_cast<size_t>(stride) * out.height);
  uint8_t* ok =
      features.has_alpha
          ? WebPDecodeRGBAInto(data, static_cast<size_t>(size), out.pixels.data(), out.pixels.size(), stride)
          : WebPDecodeRGBInto(data, static_cast<size_t>(size), out.pixels.data(), out.pixels.size(), stride);
  if (ok == nullptr) return arrow::Status::Invalid("corrupt or truncated WebP data");
  return out;
}

arrow::Result<std::vector<uint8_t>> EncodeWebp(const ImageView& image) {
  // WebP stores RGB(A) only: gray images are widened first.
  DecodedImage widened;
  ImageView view = image;
  if (image.mode == ImageMode::kL || image.mode == ImageMode::kLA) {
    widened = ConvertMode(image, image.mode == ImageMode::kL ? ImageMode::kRGB : ImageMode::kRGBA);
    view = widened.view();
  }
  // Lossless with `exact`: RGB under fully transparent pixels is kept, so round trips are exact.
  WebPConfig config;
  if (!WebPConfigInit(&config)) return arrow::Status::Invalid("libwebp version mismatch");
  config.lossless = 1;
  config.exact = 1;
  config.method = 4;
  WebPPicture picture;
  if (!WebPPictureInit(&picture)) return arrow::Status::Invalid("libwebp version mismatch");
  picture.use_argb = 1;
  picture.width = view.width;
  picture.height = view.height;
  const int stride = view.width * view.channels();
  const int imported = view.mode == ImageMode::kRGBA ? WebPPictureImportRGBA(&picture, view.data, stride)
                                                     : WebPPictureImportRGB(&picture, view.data, stride);
  if (!imported) {
    WebPPictureFree(&picture);
    return arrow::Status::OutOfMemory("WebP encoding: cannot allocate the picture");
  }
  WebPMemoryWriter writer;
  WebPMemoryWriterInit(&writer);
  picture.writer = WebPMemoryWrite;
  picture.custom_ptr = &writer;
  const int ok = WebPEncode(&config, &picture);
  WebPPictureFree(&picture);
  if (!ok) {
    WebPMemoryWriterClear(&writer);
    return arrow::Status::Invalid("WebP encoding failed (libwebp error ", picture.error_code, ")");
  }
  std::vector<uint8_t> bytes(writer.mem, writer.mem + writer.size);
  WebPMemoryWriterClear(&writer);
  return bytes;
}

}  // namespace ketch::image
