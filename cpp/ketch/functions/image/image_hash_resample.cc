// Follows Pillow's libImaging/Convert.c (rgb2l) and libImaging/Resample.c (precompute_coeffs,
// normalize_coeffs_8bpc, ImagingResampleHorizontal_8bpc / Vertical_8bpc) step for step, so the
// grayscale thumbnails and therefore the hash bits match imagehash's exactly.

#include "ketch/functions/image/image_hash_resample.h"

#include <cmath>
#include <numbers>

namespace ketch::image {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;
constexpr double kLanczosSupport = 3.0;

double Sinc(double x) {
  if (x == 0.0) return 1.0;
  x = x * std::numbers::pi;
  return std::sin(x) / x;
}

double Lanczos(double x) {
  if (-3.0 <= x && x < 3.0) return Sinc(x) * Sinc(x / 3);
  return 0.0;
}

uint8_t Clip8(int64_t in) {
  if (in >= (int64_t{1} << kPrecisionBits << 8)) return 255;
  if (in <= 0) return 0;
  return static_cast<uint8_t>(in >> kPrecisionBits);
}

/// Per output index: first input index, count of inputs and their fixed-point weights (ksize each).
struct Coefficients {
  int ksize = 0;
  std::vector<int> bounds;  // 2 per output: xmin, xmax (count)
  std::vector<int32_t> kk;  // ksize per output
};

Coefficients Precompute(int in_size, double in0, double in1, int out_size) {
  Coefficients c;
  const double scale = (in1 - in0) / out_size;
  double filterscale = scale;
  if (filterscale < 1.0) filterscale = 1.0;
  const double support = kLanczosSupport * filterscale;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  std::vector<double> k(static_cast<size_t>(out_size) * c.ksize, 0.0);
  c.bounds.resize(static_cast<size_t>(out_size) * 2);
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = in0 + (xx + 0.5) * scale;
    double ww = 0.0;
    const double ss = 1.0 / filterscale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double* kp = &k[static_cast<size_t>(xx) * c.ksize];
    for (int x = 0; x < xmax; ++x) {
      const double w = Lanczos((x + xmin - center + 0.5) * ss);
      kp[x] = w;
      ww += w;
    }
    for (int x = 0; x < xmax; ++x) {
      if (ww != 0.0) kp[x] /= ww;
    }
    c.bounds[xx * 2] = xmin;
    c.bounds[xx * 2 + 1] = xmax;
  }
  c.kk.resize(k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    c.kk[i] = k[i] < 0 ? static_cast<int32_t>(-0.5 + k[i] * (1 << kPrecisionBits))
                       : static_cast<int32_t>(0.5 + k[i] * (1 << kPrecisionBits));
  }
  return c;
}

GrayImage HorizontalPass(const GrayImage& in, int first_row, int rows, const Coefficients& c) {
  const int width = static_cast<int>(c.bounds.size() / 2);
  GrayImage out;
  out.width = width;
  out.height = rows;
  out.pixels.resize(static_cast<size_t>(width) * rows);
  for (int yy = 0; yy < rows; ++yy) {
    const uint8_t* row = &in.pixels[static_cast<size_t>(yy + first_row) * in.width];
    for (int xx = 0; xx < width; ++xx) {
      const int xmin = c.bounds[xx * 2];
      const int xmax = c.bounds[xx * 2 + 1];
      const int32_t* k = &c.kk[static_cast<size_t>(xx) * c.ksize];
      int64_t ss = int64_t{1} << (kPrecisionBits - 1);
      for (int x = 0; x < xmax; ++x) ss += int64_t{row[x + xmin]} * k[x];
      out.pixels[static_cast<size_t>(yy) * width + xx] = Clip8(ss);
    }
  }
  return out;
}

GrayImage VerticalPass(const GrayImage& in, const Coefficients& c) {
  const int height = static_cast<int>(c.bounds.size() / 2);
  GrayImage out;
  out.width = in.width;
  out.height = height;
  out.pixels.resize(static_cast<size_t>(in.width) * height);
  for (int yy = 0; yy < height; ++yy) {
    const int ymin = c.bounds[yy * 2];
    const int ymax = c.bounds[yy * 2 + 1];
    const int32_t* k = &c.kk[static_cast<size_t>(yy) * c.ksize];
    for (int xx = 0; xx < in.width; ++xx) {
      int64_t ss = int64_t{1} << (kPrecisionBits - 1);
      for (int y = 0; y < ymax; ++y)
        ss += int64_t{in.pixels[static_cast<size_t>(y + ymin) * in.width + xx]} * k[y];
      out.pixels[static_cast<size_t>(yy) * in.width + xx] = Clip8(ss);
    }
  }
  return out;
}

}  // namespace

GrayImage ToPillowGray(const ImageView& view) {
  GrayImage out;
  out.width = view.width;
  out.height = view.height;
  const int64_t n = int64_t{view.width} * view.height;
  out.pixels.resize(static_cast<size_t>(n));
  const int channels = view.channels();
  const uint8_t* src = view.data;
  if (channels <= 2) {
    for (int64_t i = 0; i < n; ++i) out.pixels[i] = src[i * channels];
    return out;
  }
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* p = src + i * channels;
    const uint32_t l24 = p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u;
    out.pixels[i] = static_cast<uint8_t>(l24 >> 16);
  }
  return out;
}

GrayImage PillowLanczosResize(const GrayImage& in, int32_t width, int32_t height) {
  if (in.width == width && in.height == height) return in;
  const Coefficients horiz = Precompute(in.width, 0, in.width, width);
  Coefficients vert = Precompute(in.height, 0, in.height, height);
  if (width == in.width) return VerticalPass(in, vert);
  if (height == in.height) return HorizontalPass(in, 0, in.height, horiz);
  // Pillow 13 picks the pass order (the rounding to uint8 between the passes makes it visible in
  // the pixels): horizontal first when enlarging both ways, else vertical first exactly when
  // 2 * width + in.height > 2 * in.width + height. Measured against Pillow 13.0.0 on 1,700 random
  // size pairs (1..700 px in, 1..256 px out); no exception found.
  const bool enlarging_both = width > in.width && height > in.height;
  if (!enlarging_both && int64_t{2} * width + in.height > int64_t{2} * in.width + height) {
    return HorizontalPass(VerticalPass(in, vert), 0, height, horiz);
  }
  // Horizontal first, over only the source rows the vertical pass reads (ybox_first .. ybox_last).
  const int ybox_first = vert.bounds[0];
  const int ybox_last = vert.bounds[height * 2 - 2] + vert.bounds[height * 2 - 1];
  for (int i = 0; i < height; ++i) vert.bounds[i * 2] -= ybox_first;
  return VerticalPass(HorizontalPass(in, ybox_first, ybox_last - ybox_first, horiz), vert);
}

}  // namespace ketch::image
