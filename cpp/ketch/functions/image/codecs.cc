#include "ketch/functions/image/codecs.h"

#include <png.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <memory>

#include "ketch/functions/image/codec_formats.h"

namespace ketch::image {

ImageFormat SniffFormat(const uint8_t* data, int64_t size) {
  static const uint8_t kPng[] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  if (size >= 8 && std::memcmp(data, kPng, 8) == 0) return ImageFormat::kPng;
  if (size >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) return ImageFormat::kJpeg;
  if (size >= 12 && std::memcmp(data, "RIFF", 4) == 0 && std::memcmp(data + 8, "WEBP", 4) == 0) {
    return ImageFormat::kWebp;
  }
  if (size >= 6 && (std::memcmp(data, "GIF87a", 6) == 0 || std::memcmp(data, "GIF89a", 6) == 0)) {
    return ImageFormat::kGif;
  }
  if (size >= 4 && (std::memcmp(data, "II*\0", 4) == 0 || std::memcmp(data, "MM\0*", 4) == 0)) {
    return ImageFormat::kTiff;
  }
  if (size >= 2 && data[0] == 'B' && data[1] == 'M') return ImageFormat::kBmp;
  return ImageFormat::kUnknown;
}

std::string FormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      return "PNG";
    case ImageFormat::kJpeg:
      return "JPEG";
    case ImageFormat::kWebp:
      return "WEBP";
    case ImageFormat::kGif:
      return "GIF";
    case ImageFormat::kTiff:
      return "TIFF";
    case ImageFormat::kBmp:
      return "BMP";
    case ImageFormat::kUnknown:
      break;
  }
  return "unknown";
}

arrow::Result<ImageFormat> ParseFormat(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "png") return ImageFormat::kPng;
  if (lower == "jpeg" || lower == "jpg") return ImageFormat::kJpeg;
  if (lower == "webp") return ImageFormat::kWebp;
  if (lower == "gif") return ImageFormat::kGif;
  if (lower == "tiff" || lower == "tif") return ImageFormat::kTiff;
  if (lower == "bmp") return ImageFormat::kBmp;
  return arrow::Status::Invalid("unknown image format '", name,
                                "' (supported: PNG, JPEG, WEBP, GIF, TIFF, BMP)");
}

arrow::Status CheckImageSize(int64_t width, int64_t height, const DecodeLimits& limits, const char* format,
                             int channels) {
  if (width <= 0 || height <= 0) {
    return arrow::Status::Invalid(format, " header declares an empty image (", width, "x", height, ")");
  }
  if (width * height > limits.max_pixels) {
    return arrow::Status::Invalid(format, " image of ", width, "x", height, " pixels exceeds the limit of ",
                                  limits.max_pixels, " pixels");
  }
  if (width * height * channels > limits.max_bytes) {
    return arrow::Status::Invalid(
        format, " image of ", width, "x", height, " pixels needs ", width * height * channels,
        " bytes decoded, more than the query's memory budget of ", limits.max_bytes,
        " bytes (raise it with ketch.set_execution_config(memory_budget_bytes=...))");
  }
  return arrow::Status::OK();
}

namespace {

// libpng reports errors by longjmp. Everything that changes after setjmp lives behind `state`
// (a pointer fixed before setjmp), so nothing depends on registers restored by longjmp.
struct PngState {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
  std::string error;
  DecodedImage image;
  std::vector<png_bytep> rows;
};

void PngReadFromMemory(png_structp png, png_bytep out, png_size_t n) {
  auto* state = static_cast<PngState*>(png_get_io_ptr(png));
  if (state->pos + n > state->size) png_error(png, "unexpected end of data (truncated PNG)");
  std::memcpy(out, state->data + state->pos, n);
  state->pos += n;
}

[[noreturn]] void PngOnError(png_structp png, png_const_charp message) {
  static_cast<PngState*>(png_get_error_ptr(png))->error = message;
  png_longjmp(png, 1);
}

void PngOnWarning(png_structp, png_const_charp) {}

// The full libpng API rather than the simplified one: the simplified API gamma-corrects files with
// a gAMA chunk, while Pillow (the reference users compare with) returns the stored samples.
arrow::Result<DecodedImage> DecodePng(const uint8_t* data, int64_t size, DecodeLimits limits) {
  auto state = std::make_unique<PngState>();
  state->data = data;
  state->size = static_cast<size_t>(size);
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, state.get(), PngOnError, PngOnWarning);
  if (png == nullptr) return arrow::Status::OutOfMemory("png_create_read_struct failed");
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return arrow::Status::OutOfMemory("png_create_info_struct failed");
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return arrow::Status::Invalid("corrupt PNG: ", state->error);
  }
  png_set_read_fn(png, state.get(), PngReadFromMemory);
  png_read_info(png, info);
  const auto width = png_get_image_width(png, info);
  const auto height = png_get_image_height(png, info);
  const auto color_type = png_get_color_type(png, info);
  const auto bit_depth = png_get_bit_depth(png, info);
  // Channels after the expansions below (palette to RGB, tRNS to alpha).
  const bool trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  const int out_channels =
      (color_type & PNG_COLOR_MASK_COLOR ? 3 : 1) + ((color_type & PNG_COLOR_MASK_ALPHA) || trns ? 1 : 0);
  auto size_check = CheckImageSize(width, height, limits, "PNG", out_channels);
  // Deflate cannot compress better than 1032:1, so a file too small for the rows it declares is
  // truncated or a bomb: refuse it before allocating the pixels.
  if (size_check.ok()) {
    const int64_t channels_in = png_get_channels(png, info);
    const int64_t raw_bytes = int64_t{height} * (1 + (int64_t{width} * channels_in * bit_depth + 7) / 8);
    if (raw_bytes > 1032 * size + 65536) {
      size_check = arrow::Status::Invalid("truncated PNG: ", size, " bytes cannot hold the ", width, "x",
                                          height, " image its header declares");
    }
  }
  if (!size_check.ok()) {
    png_destroy_read_struct(&png, &info, nullptr);
    return size_check;
  }
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  if (bit_depth == 16) png_set_strip_16(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const int channels = png_get_channels(png, info);
  if (channels < 1 || channels > 4 || png_get_rowbytes(png, info) != static_cast<size_t>(width) * channels) {
    png_destroy_read_struct(&png, &info, nullptr);
    return arrow::Status::Invalid("unsupported PNG layout (", channels, " channels)");
  }
  state->image.mode = static_cast<ImageMode>(channels);
  state->image.width = static_cast<int32_t>(width);
  state->image.height = static_cast<int32_t>(height);
  state->image.pixels.resize(static_cast<size_t>(width) * height * channels);
  state->rows.resize(height);
  for (png_uint_32 y = 0; y < height; ++y) {
    state->rows[y] = state->image.pixels.data() + static_cast<size_t>(y) * width * channels;
  }
  png_read_image(png, state->rows.data());
  png_destroy_read_struct(&png, &info, nullptr);
  return std::move(state->image);
}

struct TjDeleter {
  void operator()(void* handle) const { tjDestroy(handle); }
};

// Whether a failed tjDecompress2 produced no usable image. TurboJPEG 2.x reports TJERR_WARNING for a
// fatal error that follows a warning, so the message decides: libjpeg's warnings (JWRN_* texts) still
// yield a full image, as Pillow accepts them, except the end of the data ("Premature end of JPEG
// file"), which Pillow refuses as truncated; any other message is a fatal error.
bool JpegFailureIsFatal(void* handle, const std::string& message) {
  if (tjGetErrorCode(handle) == TJERR_FATAL) return true;
  static const char* const kWarnings[] = {"Corrupt JPEG data",
                                          "Inconsistent progression sequence",
                                          "Warning: unknown JFIF revision",
                                          "Invalid SOS parameters for sequential JPEG",
                                          "Application transferred too many scanlines",
                                          "Unknown Adobe color transform code"};
  for (const char* warning : kWarnings) {
    if (message.rfind(warning, 0) == 0) return false;
  }
  return true;
}

// Bytes per pixel a JPEG decodes through: gray 1, CMYK / YCCK 4 (decoded to CMYK first), else 3.
int JpegBytesPerPixel(int colorspace) {
  if (colorspace == TJCS_GRAY) return 1;
  return colorspace == TJCS_CMYK || colorspace == TJCS_YCCK ? 4 : 3;
}

// True when the JPEG carries Adobe's APP14 marker: its CMYK samples are stored inverted.
bool HasAdobeMarker(const uint8_t* data, int64_t size) {
  for (int64_t i = 2; i + 11 < size && i < 65536; ++i) {
    if (data[i] == 0xFF && data[i + 1] == 0xEE && std::memcmp(data + i + 4, "Adobe", 5) == 0) return true;
  }
  return false;
}

// CMYK / YCCK JPEGs: decoded to CMYK by libjpeg-turbo, then to RGB the way Pillow converts them
// (Adobe files hold inverted CMYK; Pillow's cmyk2rgb: R = (255 - K) - C * (255 - K) / 255).
arrow::Result<DecodedImage> DecodeCmykJpeg(void* handle, const uint8_t* data, int64_t size, int width,
                                           int height) {
  std::vector<uint8_t> cmyk(static_cast<size_t>(width) * height * 4);
  if (tjDecompress2(handle, data, static_cast<unsigned long>(size), cmyk.data(), width, 0, height, TJPF_CMYK,
                    TJFLAG_ACCURATEDCT) != 0) {
    const std::string message = tjGetErrorStr2(handle);
    if (JpegFailureIsFatal(handle, message)) {
      return arrow::Status::Invalid("corrupt or truncated JPEG: ", message);
    }
  }
  const bool inverted = HasAdobeMarker(data, size);
  DecodedImage out;
  out.mode = ImageMode::kRGB;
  out.width = width;
  out.height = height;
  out.pixels.resize(static_cast<size_t>(width) * height * 3);
  auto muldiv255 = [](int a, int b) {
    const int t = a * b + 128;
    return ((t >> 8) + t) >> 8;
  };
  for (size_t p = 0; p < static_cast<size_t>(width) * height; ++p) {
    int v[4];
    for (int c = 0; c < 4; ++c) v[c] = inverted ? 255 - cmyk[p * 4 + c] : cmyk[p * 4 + c];
    const int nk = 255 - v[3];
    for (int c = 0; c < 3; ++c)
      out.pixels[p * 3 + c] = static_cast<uint8_t>(std::clamp(nk - muldiv255(v[c], nk), 0, 255));
  }
  return out;
}

arrow::Result<DecodedImage> DecodeJpeg(const uint8_t* data, int64_t size, DecodeLimits limits) {
  std::unique_ptr<void, TjDeleter> handle(tjInitDecompress());
  if (!handle) return arrow::Status::OutOfMemory("tjInitDecompress failed");
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(handle.get(), data, static_cast<unsigned long>(size), &width, &height, &subsamp,
                          &colorspace) != 0) {
    return arrow::Status::Invalid("corrupt JPEG: ", tjGetErrorStr2(handle.get()));
  }
  ARROW_RETURN_NOT_OK(CheckImageSize(width, height, limits, "JPEG", JpegBytesPerPixel(colorspace)));
  if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK)
    return DecodeCmykJpeg(handle.get(), data, size, width, height);
  DecodedImage out;
  const bool gray = colorspace == TJCS_GRAY;
  out.mode = gray ? ImageMode::kL : ImageMode::kRGB;
  out.width = width;
  out.height = height;
  out.pixels.resize(static_cast<size_t>(width) * height * (gray ? 1 : 3));
  if (tjDecompress2(handle.get(), data, static_cast<unsigned long>(size), out.pixels.data(), width, 0, height,
                    gray ? TJPF_GRAY : TJPF_RGB, TJFLAG_ACCURATEDCT) != 0) {
    // Warnings (e.g. extraneous bytes) still produce a full image; errors do not, and neither does
    // data that ends early (libjpeg pads it with gray; Pillow refuses it as truncated).
    const std::string message = tjGetErrorStr2(handle.get());
    if (JpegFailureIsFatal(handle.get(), message)) {
      return arrow::Status::Invalid("corrupt or truncated JPEG: ", message);
    }
  }
  return out;
}

// A fresh TurboJPEG decompressor for every image and pass. Reusing one per thread let state of an
// earlier image leak into the next: a failed call leaves libjpeg mid-stream (TurboJPEG 2.x
// longjmps out of jpeg_read_header without aborting), and warning state survives successful
// calls, so a corrupt JPEG decoded "cleanly" after some other images. Creating a handle costs
// microseconds next to a decode; every image's verdict now depends on its own bytes only.
std::unique_ptr<void, TjDeleter> NewDecompressor() {
  return std::unique_ptr<void, TjDeleter>(tjInitDecompress());
}

}  // namespace

arrow::Result<JpegHeader> ReadJpegHeader(const uint8_t* data, int64_t size, DecodeLimits limits) {
  auto owned = NewDecompressor();
  void* handle = owned.get();
  if (!handle) return arrow::Status::OutOfMemory("tjInitDecompress failed");
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(handle, data, static_cast<unsigned long>(size), &width, &height, &subsamp,
                          &colorspace) != 0) {
    return arrow::Status::Invalid("corrupt JPEG: ", tjGetErrorStr2(handle));
  }
  ARROW_RETURN_NOT_OK(CheckImageSize(width, height, limits, "JPEG", JpegBytesPerPixel(colorspace)));
  JpegHeader header;
  header.width = width;
  header.height = height;
  header.mode = colorspace == TJCS_GRAY ? ImageMode::kL : ImageMode::kRGB;
  header.cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  return header;
}

JpegHeader ShrinkOnLoad(const JpegHeader& header, int32_t target_width, int32_t target_height) {
  if (target_width <= 0 || target_height <= 0) return header;
  // Twice the target, as Pillow's thumbnail (reducing_gap=2.0): the bilinear resize after it still
  // shrinks at least 2x, which keeps the result within 3 levels (mean) of a full-size decode; a
  // reduction straight to the target (1/8 DCT blocks, a box filter) differed by 4.4.
  const int32_t scale = std::min(header.width / (2 * target_width), header.height / (2 * target_height));
  int32_t denom = 1;
  for (int32_t d : {8, 4, 2}) {
    if (d <= scale) {
      denom = d;
      break;
    }
  }
  if (denom == 1) return header;
  JpegHeader out = header;
  out.width = (header.width + denom - 1) / denom;  // TJSCALED(width, {1, denom})
  out.height = (header.height + denom - 1) / denom;
  return out;
}

arrow::Status DecodeJpegInto(const uint8_t* data, int64_t size, const JpegHeader& header, uint8_t* dst) {
  auto owned = NewDecompressor();
  void* handle = owned.get();
  if (!handle) return arrow::Status::OutOfMemory("tjInitDecompress failed");
  const bool gray = header.mode == ImageMode::kL;
  if (tjDecompress2(handle, data, static_cast<unsigned long>(size), dst, header.width, 0, header.height,
                    gray ? TJPF_GRAY : TJPF_RGB, TJFLAG_ACCURATEDCT) != 0) {
    const std::string message = tjGetErrorStr2(handle);
    if (JpegFailureIsFatal(handle, message))
      return arrow::Status::Invalid("corrupt or truncated JPEG: ", message);
  }
  return arrow::Status::OK();
}

arrow::Result<DecodedImage> Decode(const uint8_t* data, int64_t size, DecodeLimits limits) {
  if (size == 0) return arrow::Status::Invalid("empty image bytes (0 bytes)");
  switch (SniffFormat(data, size)) {
    case ImageFormat::kPng:
      return DecodePng(data, size, limits);
    case ImageFormat::kJpeg:
      return DecodeJpeg(data, size, limits);
    case ImageFormat::kWebp:
      return DecodeWebp(data, size, limits);
    case ImageFormat::kGif:
      return DecodeGif(data, size, limits);
    case ImageFormat::kTiff:
      return DecodeTiff(data, size, limits);
    case ImageFormat::kBmp:
      return DecodeBmp(data, size, limits);
    case ImageFormat::kUnknown:
      break;
  }
  return arrow::Status::Invalid("unrecognized image format (", size,
                                " bytes; supported: PNG, JPEG, WEBP, GIF, TIFF, BMP)");
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
  std::vector<int32_t> start;   // first input index per output index
  std::vector<int32_t> count;   // taps per output index
  std::vector<int32_t> coeffs;  // max_taps fixed-point weights per output index
  int32_t max_taps = 0;
};

// Pillow's fixed-point precision for 8-bit images (Resample.c: PRECISION_BITS = 32 - 8 - 2).
constexpr int kPrecisionBits = 32 - 8 - 2;

// Pillow's precompute_coeffs + normalize_coeffs_8bpc for the bilinear (triangle) filter, support 1.
FilterTaps ComputeTaps(int32_t in_size, int32_t out_size) {
  FilterTaps taps;
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = 1.0 * filter_scale;
  taps.max_taps = static_cast<int32_t>(std::ceil(support)) * 2 + 1;
  taps.start.resize(out_size);
  taps.count.resize(out_size);
  taps.coeffs.assign(static_cast<size_t>(out_size) * taps.max_taps, 0);
  std::vector<double> w(taps.max_taps);
  for (int32_t x = 0; x < out_size; ++x) {
    const double center = (x + 0.5) * scale;
    int32_t xmin = std::max(static_cast<int32_t>(center - support + 0.5), 0);
    int32_t xmax = std::min(static_cast<int32_t>(center + support + 0.5), in_size) - xmin;
    double total = 0.0;
    for (int32_t j = 0; j < xmax; ++j) {
      double t = std::abs((j + xmin - center + 0.5) / filter_scale);
      w[j] = t < 1.0 ? 1.0 - t : 0.0;
      total += w[j];
    }
    int32_t* k = &taps.coeffs[static_cast<size_t>(x) * taps.max_taps];
    for (int32_t j = 0; j < xmax; ++j) {
      const double v = (total != 0.0 ? w[j] / total : w[j]) * (1 << kPrecisionBits);
      k[j] = static_cast<int32_t>(v < 0 ? v - 0.5 : v + 0.5);
    }
    taps.start[x] = xmin;
    taps.count[x] = xmax;
  }
  return taps;
}

inline uint8_t Clip8(int32_t acc) {
  int32_t v = acc >> kPrecisionBits;
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

// Pillow's RGBA -> RGBa (premultiplied alpha) and back (Convert.c rgbA2rgba / rgba2rgbA), so
// resizing translucent images does not bleed the colour of transparent pixels.
inline uint8_t MulDiv255(uint32_t a, uint32_t b) {
  uint32_t tmp = a * b + 128;
  return static_cast<uint8_t>(((tmp >> 8) + tmp) >> 8);
}

void Premultiply(uint8_t* pixels, int64_t count, int32_t channels) {
  for (int64_t p = 0; p < count; ++p) {
    uint8_t* px = pixels + p * channels;
    const uint8_t alpha = px[channels - 1];
    for (int32_t c = 0; c < channels - 1; ++c) px[c] = MulDiv255(px[c], alpha);
  }
}

void Unpremultiply(uint8_t* pixels, int64_t count, int32_t channels) {
  for (int64_t p = 0; p < count; ++p) {
    uint8_t* px = pixels + p * channels;
    const uint32_t alpha = px[channels - 1];
    if (alpha == 255 || alpha == 0) continue;
    for (int32_t c = 0; c < channels - 1; ++c)
      px[c] = static_cast<uint8_t>(std::min<uint32_t>(255, (255 * px[c]) / alpha));
  }
}

// Horizontal pass for C channels: every output pixel is one weighted sum per channel (int32, as
// Pillow accumulates; weights are normalized to 2**22, so 255 * 2**22 fits).
template <int C>
void HorizontalPass(const uint8_t* src, int32_t in_w, int32_t in_h, const FilterTaps& h, int32_t out_width,
                    uint8_t* tmp) {
  for (int32_t y = 0; y < in_h; ++y) {
    const uint8_t* row = src + static_cast<int64_t>(y) * in_w * C;
    uint8_t* out_row = tmp + static_cast<int64_t>(y) * out_width * C;
    for (int32_t x = 0; x < out_width; ++x) {
      const int32_t* k = &h.coeffs[static_cast<size_t>(x) * h.max_taps];
      const uint8_t* in = row + static_cast<int64_t>(h.start[x]) * C;
      int32_t acc[C];
      for (int ch = 0; ch < C; ++ch) acc[ch] = int32_t{1} << (kPrecisionBits - 1);
      const int32_t taps = h.count[x];
      for (int32_t j = 0; j < taps; ++j) {
        for (int ch = 0; ch < C; ++ch) acc[ch] += int32_t{in[j * C + ch]} * k[j];
      }
      for (int ch = 0; ch < C; ++ch) out_row[x * C + ch] = Clip8(acc[ch]);
    }
  }
}

void ResizePlanes(const uint8_t* src, int32_t in_w, int32_t in_h, int32_t c, int32_t out_width,
                  int32_t out_height, uint8_t* dst) {
  // Horizontal pass: in_h x out_width.
  FilterTaps h = ComputeTaps(in_w, out_width);
  std::vector<uint8_t> tmp(static_cast<size_t>(in_h) * out_width * c);
  switch (c) {
    case 1:
      HorizontalPass<1>(src, in_w, in_h, h, out_width, tmp.data());
      break;
    case 2:
      HorizontalPass<2>(src, in_w, in_h, h, out_width, tmp.data());
      break;
    case 3:
      HorizontalPass<3>(src, in_w, in_h, h, out_width, tmp.data());
      break;
    default:
      HorizontalPass<4>(src, in_w, in_h, h, out_width, tmp.data());
      break;
  }
  // Vertical pass: out_height x out_width, accumulating whole rows (contiguous, vectorizable).
  FilterTaps v = ComputeTaps(in_h, out_height);
  const int64_t stride = static_cast<int64_t>(out_width) * c;
  std::vector<int32_t> acc(stride);
  for (int32_t y = 0; y < out_height; ++y) {
    const int32_t* k = &v.coeffs[static_cast<size_t>(y) * v.max_taps];
    std::fill(acc.begin(), acc.end(), int32_t{1} << (kPrecisionBits - 1));
    for (int32_t j = 0; j < v.count[y]; ++j) {
      const uint8_t* in = tmp.data() + (v.start[y] + j) * stride;
      const int32_t weight = k[j];
      for (int64_t i = 0; i < stride; ++i) acc[i] += int32_t{in[i]} * weight;
    }
    uint8_t* out_row = dst + y * stride;
    for (int64_t i = 0; i < stride; ++i) out_row[i] = Clip8(acc[i]);
  }
}

}  // namespace

void ResizeBilinear(const ImageView& src, int32_t out_width, int32_t out_height, uint8_t* dst) {
  const int32_t c = src.channels();
  if (out_width == src.width && out_height == src.height) {  // Pillow returns a copy
    std::memcpy(dst, src.data, src.num_bytes());
    return;
  }
  const bool alpha = src.mode == ImageMode::kLA || src.mode == ImageMode::kRGBA;
  if (!alpha) return ResizePlanes(src.data, src.width, src.height, c, out_width, out_height, dst);
  std::vector<uint8_t> premultiplied(src.data, src.data + src.num_bytes());
  Premultiply(premultiplied.data(), int64_t{src.width} * src.height, c);
  ResizePlanes(premultiplied.data(), src.width, src.height, c, out_width, out_height, dst);
  Unpremultiply(dst, int64_t{out_width} * out_height, c);
}

}  // namespace ketch::image
