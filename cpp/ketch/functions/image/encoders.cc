// PNG (libpng) and JPEG (libjpeg-turbo's TurboJPEG API) encoders, and the Encode dispatch.

#include <png.h>
#include <turbojpeg.h>

#include <memory>
#include <string>

#include "ketch/functions/image/codec_formats.h"

namespace ketch::image {
namespace {

struct PngWriteState {
  std::vector<uint8_t> bytes;
  std::string error;
  std::vector<png_const_bytep> rows;
};

void PngWrite(png_structp png, png_bytep data, png_size_t n) {
  auto* state = static_cast<PngWriteState*>(png_get_io_ptr(png));
  state->bytes.insert(state->bytes.end(), data, data + n);
}
void PngFlush(png_structp) {}

[[noreturn]] void PngWriteError(png_structp png, png_const_charp message) {
  static_cast<PngWriteState*>(png_get_error_ptr(png))->error = message;
  png_longjmp(png, 1);
}
void PngWriteWarning(png_structp, png_const_charp) {}

struct TjDeleter {
  void operator()(void* handle) const { tjDestroy(handle); }
};

}  // namespace

arrow::Result<std::vector<uint8_t>> EncodePng(const ImageView& image) {
  auto state = std::make_unique<PngWriteState>();
  png_structp png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, state.get(), PngWriteError, PngWriteWarning);
  if (png == nullptr) return arrow::Status::OutOfMemory("png_create_write_struct failed");
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    return arrow::Status::OutOfMemory("png_create_info_struct failed");
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return arrow::Status::Invalid("PNG encoding failed: ", state->error);
  }
  static const int kColorTypes[] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                    PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_write_fn(png, state.get(), PngWrite, PngFlush);
  png_set_IHDR(png, info, image.width, image.height, 8, kColorTypes[image.channels()], PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  state->rows.resize(image.height);
  const size_t row_bytes = static_cast<size_t>(image.width) * image.channels();
  for (int32_t y = 0; y < image.height; ++y) state->rows[y] = image.data + y * row_bytes;
  png_write_image(png, const_cast<png_bytepp>(state->rows.data()));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return std::move(state->bytes);
}

arrow::Result<std::vector<uint8_t>> EncodeJpeg(const ImageView& image, int quality) {
  if (image.mode == ImageMode::kLA || image.mode == ImageMode::kRGBA) {
    return arrow::Status::Invalid("cannot encode a ", ModeName(image.mode),
                                  " image as JPEG (no alpha channel); convert it with image.to_mode first");
  }
  std::unique_ptr<void, TjDeleter> handle(tjInitCompress());
  if (!handle) return arrow::Status::OutOfMemory("tjInitCompress failed");
  const bool gray = image.mode == ImageMode::kL;
  unsigned char* out = nullptr;
  unsigned long size = 0;
  if (tjCompress2(handle.get(), image.data, image.width, 0, image.height, gray ? TJPF_GRAY : TJPF_RGB, &out,
                  &size, gray ? TJSAMP_GRAY : TJSAMP_420, quality, TJFLAG_ACCURATEDCT) != 0) {
    if (out) tjFree(out);
    return arrow::Status::Invalid("JPEG encoding failed: ", tjGetErrorStr2(handle.get()));
  }
  std::vector<uint8_t> bytes(out, out + size);
  tjFree(out);
  return bytes;
}

arrow::Result<std::vector<uint8_t>> Encode(const ImageView& image, ImageFormat format, int quality) {
  switch (format) {
    case ImageFormat::kPng:
      return EncodePng(image);
    case ImageFormat::kJpeg:
      return EncodeJpeg(image, quality);
    case ImageFormat::kWebp:
      return EncodeWebp(image);
    case ImageFormat::kTiff:
      return EncodeTiff(image);
    default:
      return arrow::Status::NotImplemented("encoding ", FormatName(format),
                                           " is not supported (supported: PNG, JPEG, WEBP, TIFF)");
  }
}

}  // namespace ketch::image
