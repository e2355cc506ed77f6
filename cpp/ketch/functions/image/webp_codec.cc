// WebP through libwebp (decode: WebPDecodeRGB(A)Into; encode: lossless with exact RGB, WebPEncode).

#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>

#include <memory>

#include "ketch/functions/image/codec_formats.h"

namespace ketch::image {

namespace {

// The first frame of an animated WebP, composited on its canvas (libwebpdemux's WebPAnimDecoder).
arrow::Result<DecodedImage> DecodeAnimatedWebp(const uint8_t* data, int64_t size, DecodeLimits limits,
                                               bool alpha) {
  WebPAnimDecoderOptions options;
  if (!WebPAnimDecoderOptionsInit(&options)) return arrow::Status::Invalid("libwebp version mismatch");
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  WebPData webp{data, static_cast<size_t>(size)};
  std::unique_ptr<WebPAnimDecoder, decltype(&WebPAnimDecoderDelete)> decoder(
      WebPAnimDecoderNew(&webp, &options), &WebPAnimDecoderDelete);
  if (!decoder) return arrow::Status::Invalid("corrupt animated WebP");
  WebPAnimInfo info;
  if (!WebPAnimDecoderGetInfo(decoder.get(), &info)) return arrow::Status::Invalid("corrupt animated WebP");
  ARROW_RETURN_NOT_OK(CheckImageSize(info.canvas_width, info.canvas_height, limits, "WebP"));
  uint8_t* rgba = nullptr;
  int timestamp = 0;
  if (!WebPAnimDecoderGetNext(decoder.get(), &rgba, &timestamp)) {
    return arrow::Status::Invalid("corrupt or truncated animated WebP (first frame)");
  }
  DecodedImage out;
  out.width = static_cast<int32_t>(info.canvas_width);
  out.height = static_cast<int32_t>(info.canvas_height);
  out.mode = ImageMode::kRGBA;
  out.pixels.assign(rgba, rgba + static_cast<size_t>(out.width) * out.height * 4);
  if (!alpha) return ConvertMode(out.view(), ImageMode::kRGB);
  return out;
}

}  // namespace

arrow::Result<DecodedImage> DecodeWebp(const uint8_t* data, int64_t size, DecodeLimits limits) {
  WebPBitstreamFeatures features;
  if (WebPGetFeatures(data, static_cast<size_t>(size), &features) != VP8_STATUS_OK) {
    return arrow::Status::Invalid("corrupt WebP: cannot read the header");
  }
  if (features.has_animation) return DecodeAnimatedWebp(data, size, limits, features.has_alpha);
  ARROW_RETURN_NOT_OK(
      CheckImageSize(features.width, features.height, limits, "WebP", features.has_alpha ? 4 : 3));
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
