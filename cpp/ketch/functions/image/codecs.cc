#include "ketch/functions/image/codecs.h"

#include <png.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

namespace ketch::image {

ImageFormat SniffFormat(const uint8_t* data, int64_t size) {
  static const uint8_t kPng[] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  if (size >= 8 && std::memcmp(data, kPng, 8) == 0) return ImageFormat::kPng;
  if (size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) return ImageFormat::kJpeg;
  return ImageFormat::kUnknown;
}

namespace {

arrow::Status CheckSize(int64_t width, int64_t height, int64_t max_pixels, const char* format) {
  if (width <= 0 || height <= 0) {
    return arrow::Status::Invalid(format, " header declares an empty image (", width, "x", height, ")");
  }
  if (width * height > max_pixels) {
    return arrow::Status::Invalid(format, " image of ", width, "x", height, " pixels exceeds the limit of ",
                                  max_pixels, " pixels");
  }
  return arrow::Status::OK();
}

arrow::Result<DecodedImage> DecodePng(const uint8_t* data, int64_t size, int64_t max_pixels) {
  png_image png;
  std::memset(&png, 0, sizeof(png));
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&png, data, static_cast<size_t>(size))) {
    std::string message = png.message;
    png_image_free(&png);
    return arrow::Status::Invalid("corrupt PNG: ", message);
  }
  auto st = CheckSize(png.width, png.height, max_pixels, "PNG");
  if (!st.ok()) {
    png_image_free(&png);
    return st;
  }
  DecodedImage out;
  const bool color = png.format & PNG_FORMAT_FLAG_COLOR;
  const bool alpha = png.format & PNG_FORMAT_FLAG_ALPHA;
  png.format = (color ? PNG_FORMAT_FLAG_COLOR : 0) | (alpha ? PNG_FORMAT_FLAG_ALPHA : 0);
  out.mode = color ? (alpha ? ImageMode::kRGBA : ImageMode::kRGB) : (alpha ? ImageMode::kLA : ImageMode::kL);
  out.width = static_cast<int32_t>(png.width);
  out.height = static_cast<int32_t>(png.height);
  out.pixels.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, out.pixels.data(), 0, nullptr)) {
    std::string message = png.message;
    png_image_free(&png);
    return arrow::Status::Invalid("corrupt PNG: ", message);
  }
  return out;
}

struct TjDeleter {
  void operator()(void* handle) const { tjDestroy(handle); }
};

arrow::Result<DecodedImage> DecodeJpeg(const uint8_t* data, int64_t size, int64_t max_pixels) {
  std::unique_ptr<void, TjDeleter> handle(tjInitDecompress());
  if (!handle) return arrow::Status::OutOfMemory("tjInitDecompress failed");
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(handle.get(), data, static_cast<unsigned long>(size), &width, &height, &subsamp,
                          &colorspace) != 0) {
    return arrow::Status::Invalid("corrupt JPEG: ", tjGetErrorStr2(handle.get()));
  }
  ARROW_RETURN_NOT_OK(CheckSize(width, height, max_pixels, "JPEG"));
  DecodedImage out;
  const bool gray = colorspace == TJCS_GRAY;
  out.mode = gray ? ImageMode::kL : ImageMode::kRGB;
  out.width = width;
  out.height = height;
  out.pixels.resize(static_cast<size_t>(width) * height * (gray ? 1 : 3));
  if (tjDecompress2(handle.get(), data, static_cast<unsigned long>(size), out.pixels.data(), width, 0, height,
                    gray ? TJPF_GRAY : TJPF_RGB, TJFLAG_ACCURATEDCT) != 0) {
    // Warnings (e.g. extraneous bytes) still produce a full image; errors do not.
    if (tjGetErrorCode(handle.get()) == TJERR_FATAL) {
      return arrow::Status::Invalid("corrupt JPEG: ", tjGetErrorStr2(handle.get()));
    }
  }
  return out;
}

}  // namespace

arrow::Result<DecodedImage> Decode(const uint8_t* data, int64_t size, int64_t max_pixels) {
  if (size == 0) return arrow::Status::Invalid("empty image bytes (0 bytes)");
  switch (SniffFormat(data, size)) {
    case ImageFormat::kPng:
      return DecodePng(data, size, max_pixels);
    case ImageFormat::kJpeg:
      return DecodeJpeg(data, size, max_pixels);
    case ImageFormat::kUnknown:
      break;
  }
  return arrow::Status::Invalid("unrecognized image format (", size, " bytes; supported: PNG, JPEG)");
}

DecodedImage ConvertMode(const ImageView& image, ImageMode target) {
  DecodedImage out;
  out.height = image.height;
  out.width = image.width;
  out.mode = target;
  const int64_t pixels = int64_t{image.height} * image.width;
  const int32_t in_c = image.channels();
  const int32_t out_c = ModeChannels(target);
  out.pixels.resize(pixels * out_c);
  const bool in_color = in_c >= 3, in_alpha = in_c == 2 || in_c == 4;
  const bool out_color = out_c >= 3, out_alpha = out_c == 2 || out_c == 4;
  for (int64_t p = 0; p < pixels; ++p) {
    const uint8_t* s = image.data + p * in_c;
    uint8_t* d = out.pixels.data() + p * out_c;
    if (out_color) {
      if (in_color) {
        d[0] = s[0], d[1] = s[1], d[2] = s[2];
      } else {
        d[0] = d[1] = d[2] = s[0];
      }
    } else {
      // Pillow's ITU-R 601-2 luma transform, rounded.
      d[0] = in_color ? static_cast<uint8_t>((s[0] * 299 + s[1] * 587 + s[2] * 114 + 500) / 1000) : s[0];
    }
    if (out_alpha) d[out_c - 1] = in_alpha ? s[in_c - 1] : 255;
  }
  return out;
}

namespace {

struct FilterTaps {
  std::vector<int32_t> start;    // first input index per output index
  std::vector<int32_t> count;    // taps per output index
  std::vector<double> weights;   // max_taps per output index
  int32_t max_taps = 0;
};

// Pillow's precompute_coeffs for the bilinear (triangle) filter, support 1.
FilterTaps ComputeTaps(int32_t in_size, int32_t out_size) {
  FilterTaps taps;
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = 1.0 * filter_scale;
  taps.max_taps = static_cast<int32_t>(std::ceil(support)) * 2 + 1;
  taps.start.resize(out_size);
  taps.count.resize(out_size);
  taps.weights.assign(static_cast<size_t>(out_size) * taps.max_taps, 0.0);
  for (int32_t x = 0; x < out_size; ++x) {
    const double center = (x + 0.5) * scale;
    int32_t xmin = std::max(static_cast<int32_t>(center - support + 0.5), 0);
    int32_t xmax = std::min(static_cast<int32_t>(center + support + 0.5), in_size) - xmin;
    double total = 0.0;
    double* w = &taps.weights[static_cast<size_t>(x) * taps.max_taps];
    for (int32_t j = 0; j < xmax; ++j) {
      double t = std::abs((j + xmin - center + 0.5) / filter_scale);
      w[j] = t < 1.0 ? 1.0 - t : 0.0;
      total += w[j];
    }
    if (total != 0.0) {
      for (int32_t j = 0; j < xmax; ++j) w[j] /= total;
    }
    taps.start[x] = xmin;
    taps.count[x] = xmax;
  }
  return taps;
}

inline uint8_t Clip8(double v) {
  long r = std::lround(v);
  return static_cast<uint8_t>(r < 0 ? 0 : (r > 255 ? 255 : r));
}

}  // namespace

void ResizeBilinear(const ImageView& src, int32_t out_width, int32_t out_height, uint8_t* dst) {
  const int32_t c = src.channels();
  // Horizontal pass: src.height x out_width.
  FilterTaps h = ComputeTaps(src.width, out_width);
  std::vector<uint8_t> tmp(static_cast<size_t>(src.height) * out_width * c);
  for (int32_t y = 0; y < src.height; ++y) {
    const uint8_t* row = src.data + static_cast<int64_t>(y) * src.width * c;
    uint8_t* out_row = tmp.data() + static_cast<int64_t>(y) * out_width * c;
    for (int32_t x = 0; x < out_width; ++x) {
      const double* w = &h.weights[static_cast<size_t>(x) * h.max_taps];
      for (int32_t ch = 0; ch < c; ++ch) {
        double acc = 0.0;
        for (int32_t j = 0; j < h.count[x]; ++j) acc += row[(h.start[x] + j) * c + ch] * w[j];
        out_row[x * c + ch] = Clip8(acc);
      }
    }
  }
  // Vertical pass: out_height x out_width.
  FilterTaps v = ComputeTaps(src.height, out_height);
  const int64_t stride = static_cast<int64_t>(out_width) * c;
  for (int32_t y = 0; y < out_height; ++y) {
    const double* w = &v.weights[static_cast<size_t>(y) * v.max_taps];
    uint8_t* out_row = dst + y * stride;
    for (int64_t i = 0; i < stride; ++i) {
      double acc = 0.0;
      for (int32_t j = 0; j < v.count[y]; ++j) acc += tmp[(v.start[y] + j) * stride + i] * w[j];
      out_row[i] = Clip8(acc);
    }
  }
}

}  // namespace ketch::image
