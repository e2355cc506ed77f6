// image_hash: Daft 0.7.26's perceptual hashes (daft.functions.image_hash), bit for bit where the
// arithmetic allows. Daft hashes in Rust (src/daft-image/src/ops.rs) on the `image` crate 0.25.10,
// not on Pillow, so its thumbnails differ from the imagehash package's:
// - grayscale is image-rs's `to_luma8()`: L and LA keep L; RGB and RGBA (alpha ignored) become
//   round(wr R + wg G + wb B) with the sRGB luminance row for the D65 white point (0.31272, 0.32903)
//   (image 0.25.10 converts through moxcms). These weights reproduce Daft's L on all but 170 of
//   the 2^24 RGB colours (exact .5 ties, within 4e-5 of the midpoint, where Daft's f32 path rounds
//   the other way: a difference of one gray level).
// - the thumbnail is `image::imageops::resize(.., FilterType::Triangle)`: a separable triangle
//   (bilinear) filter with support scaled by the downscale ratio, vertical pass first into f32,
//   then horizontal, rounded (half away from zero) and clamped to u8; all in f32 like image-rs.
// Then per method (hs = hash_size, bits row-major, packed MSB first from the first byte, zero
// padding at the end):
// - ahash: hs x hs thumbnail, bit = pixel > mean.
// - dhash: (hs + 1) wide x hs high, bit = left < right. dhash_vertical: hs wide x (hs + 1) high,
//   bit = lower > upper.
// - phash: 4hs x 4hs, unnormalised DCT-II (y[k] = 2 sum x[n] cos(pi k (2n + 1) / 2N)) along rows
//   then columns, low hs x hs block, bit = coefficient > median (mean of the two middle values).
// - phash_simple: 4hs x 4hs, row DCT only, rows 0..hs, columns 1..hs, bit = coefficient > mean.
// - whash: thumbnail s x s, s = max(2^floor(log2(min(w, h))), hs), scaled by 1/255; Haar
//   (a = (x0 + x1) / sqrt2, d = (x0 - x1) / sqrt2) to full depth, LL zeroed, reconstructed, then
//   log2(s / hs) levels; LL min-max normalised, bit = value > mean (Daft's choice; imagehash uses
//   the median).
// - crop_resistant: a segments x segments grid of crops (x0 = col * w / segments, integer), the
//   phash of each, their bytes concatenated (Daft's grid, not imagehash's watershed segments).
// - colorhash: RGB -> Pillow's integer HSV, 14 bins (black, gray, 6 faint hues, 6 bright hues),
//   each quantised to binbits bits with imagehash's encoding.
// The DCTs are direct sums in long double, where Daft uses rustfft: coefficients that are exactly 0
// (flat thumbnail rows or columns) come out as different rounding noise, so those bits may differ.

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <numbers>
#include <numeric>

#include "ketch/functions/image/image_function_util.h"
#include "ketch/functions/image/image_functions.h"

namespace ketch::image {
namespace {

constexpr const char* kName = "image_hash";
constexpr int64_t kMaxHashSize = 1024;
constexpr int64_t kMaxSegments = 64;
constexpr int64_t kMaxBinbits = 31;

enum class Method {
  kAHash,
  kDHash,
  kDHashVertical,
  kPHash,
  kPHashSimple,
  kWHash,
  kCropResistant,
  kColorHash
};

struct Spec {
  Method method = Method::kPHash;
  int32_t hash_size = 8;
  int32_t binbits = 3;
  int32_t segments = 3;
};

arrow::Result<int64_t> IntOption(const FunctionOptions& options, const char* key, int64_t fallback) {
  if (!HasOption(options, key)) return fallback;
  return GetIntOption(options, key, kName);
}

arrow::Result<Spec> ParseSpec(const FunctionOptions& options) {
  std::string name = "phash";
  if (HasOption(options, "method")) {
    ARROW_ASSIGN_OR_RAISE(name, GetStringOption(options, "method", kName));
  }
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  static const std::pair<const char*, Method> kMethods[] = {{"ahash", Method::kAHash},
                                                            {"dhash", Method::kDHash},
                                                            {"dhash_vertical", Method::kDHashVertical},
                                                            {"phash", Method::kPHash},
                                                            {"phash_simple", Method::kPHashSimple},
                                                            {"whash", Method::kWHash},
                                                            {"crop_resistant", Method::kCropResistant},
                                                            {"colorhash", Method::kColorHash}};
  Spec spec;
  bool found = false;
  for (const auto& [method_name, method] : kMethods) {
    if (name == method_name) {
      spec.method = method;
      found = true;
    }
  }
  if (!found) {
    return arrow::Status::Invalid(kName, ": unknown image hash method '", name,
                                  "'; expected one of 'ahash', 'dhash', 'dhash_vertical', 'phash', "
                                  "'phash_simple', 'whash', 'crop_resistant', 'colorhash'");
  }
  ARROW_ASSIGN_OR_RAISE(int64_t hash_size, IntOption(options, "hash_size", 8));
  ARROW_ASSIGN_OR_RAISE(int64_t binbits, IntOption(options, "binbits", 3));
  ARROW_ASSIGN_OR_RAISE(int64_t segments, IntOption(options, "segments", 3));
  if (hash_size < 1 || hash_size > kMaxHashSize) {
    return arrow::Status::Invalid(kName, ": hash_size must be in 1..", kMaxHashSize, ", got ", hash_size);
  }
  if (spec.method == Method::kWHash && (hash_size & (hash_size - 1)) != 0) {
    return arrow::Status::Invalid(kName, ": hash_size must be a power of 2 for 'whash', got ", hash_size);
  }
  if (spec.method == Method::kCropResistant && (hash_size * hash_size) % 8 != 0) {
    // Daft concatenates whole bytes per segment and then fails on the width (a panic).
    return arrow::Status::Invalid(
        kName, ": 'crop_resistant' needs hash_size * hash_size to be a multiple of 8, got ", "hash_size ",
        hash_size);
  }
  if (binbits < 1 || binbits > kMaxBinbits) {
    return arrow::Status::Invalid(kName, ": binbits must be in 1..", kMaxBinbits, ", got ", binbits);
  }
  if (segments < 1 || segments > kMaxSegments) {
    return arrow::Status::Invalid(kName, ": segments must be in 1..", kMaxSegments, ", got ", segments);
  }
  spec.hash_size = static_cast<int32_t>(hash_size);
  spec.binbits = static_cast<int32_t>(binbits);
  spec.segments = static_cast<int32_t>(segments);
  return spec;
}

int64_t BytesFor(int64_t bits) { return (bits + 7) / 8; }

/// Daft's hash_output_bytes.
int64_t OutputBytes(const Spec& spec) {
  const int64_t square = int64_t{spec.hash_size} * spec.hash_size;
  switch (spec.method) {
    case Method::kColorHash:
      return BytesFor(14 * int64_t{spec.binbits});
    case Method::kCropResistant:
      return BytesFor(int64_t{spec.segments} * spec.segments * square);
    default:
      return BytesFor(square);
  }
}

/// A row-major 8-bit grayscale image.
struct Gray {
  int32_t width = 0;
  int32_t height = 0;
  std::vector<uint8_t> pixels;
  uint8_t at(int32_t x, int32_t y) const { return pixels[static_cast<size_t>(y) * width + x]; }
};

/// sRGB luminance weights for white (0.31272, 0.32903): the Y row of the RGB -> XYZ matrix.
struct LumaWeights {
  float r, g, b;
};

LumaWeights ComputeLumaWeights() {
  const double prim[3][2] = {{0.64, 0.33}, {0.30, 0.60}, {0.15, 0.06}};
  const double white[2] = {0.31272, 0.32903};
  auto xyz = [](double x, double y) { return std::array<double, 3>{x / y, 1.0, (1 - x - y) / y}; };
  std::array<std::array<double, 3>, 3> p{};  // columns = primaries
  for (int c = 0; c < 3; ++c) {
    const auto v = xyz(prim[c][0], prim[c][1]);
    for (int r = 0; r < 3; ++r) p[r][c] = v[r];
  }
  const auto w = xyz(white[0], white[1]);
  // Solve p * s = w by Cramer's rule.
  auto det = [](const std::array<std::array<double, 3>, 3>& m) {
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
           m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  };
  const double d = det(p);
  double s[3];
  for (int c = 0; c < 3; ++c) {
    auto m = p;
    for (int r = 0; r < 3; ++r) m[r][c] = w[r];
    s[c] = det(m) / d;
  }
  return {static_cast<float>(p[1][0] * s[0]), static_cast<float>(p[1][1] * s[1]),
          static_cast<float>(p[1][2] * s[2])};
}

/// image-rs `DynamicImage::to_luma8()` (see the file comment).
Gray ToLuma(const ImageView& view) {
  static const LumaWeights kWeights = ComputeLumaWeights();
  Gray out{view.width, view.height, std::vector<uint8_t>(static_cast<size_t>(view.width) * view.height)};
  const int32_t channels = view.channels();
  for (size_t i = 0; i < out.pixels.size(); ++i) {
    const uint8_t* px = view.data + i * channels;
    if (channels < 3) {
      out.pixels[i] = px[0];
      continue;
    }
    const float r = kWeights.r * static_cast<float>(px[0]);
    const float g = kWeights.g * static_cast<float>(px[1]);
    const float b = kWeights.b * static_cast<float>(px[2]);
    const float l = std::floor((r + g) + b + 0.5f);
    out.pixels[i] = static_cast<uint8_t>(std::clamp(l, 0.0f, 255.0f));
  }
  return out;
}

/// One output sample of image-rs's resample: the first input index and normalised weights.
struct Tap {
  int32_t left = 0;
  std::vector<float> weights;
};

/// image-rs's sample weights for the triangle filter (support 1), vertical_sample /
/// horizontal_sample in imageops/sample.rs, in f32.
std::vector<Tap> TriangleTaps(int32_t in_size, int32_t out_size) {
  const float ratio = static_cast<float>(in_size) / static_cast<float>(out_size);
  const float sratio = ratio < 1.0f ? 1.0f : ratio;
  const float src_support = 1.0f * sratio;
  std::vector<Tap> taps(out_size);
  for (int32_t o = 0; o < out_size; ++o) {
    float input = (static_cast<float>(o) + 0.5f) * ratio;
    int64_t left = static_cast<int64_t>(std::floor(input - src_support));
    left = std::clamp<int64_t>(left, 0, in_size - 1);
    int64_t right = static_cast<int64_t>(std::ceil(input + src_support));
    right = std::clamp<int64_t>(right, left + 1, in_size);
    input = input - 0.5f;
    Tap& tap = taps[o];
    tap.left = static_cast<int32_t>(left);
    float sum = 0.0f;
    for (int64_t i = left; i < right; ++i) {
      const float x = (static_cast<float>(i) - input) / sratio;
      const float w = std::fabs(x) < 1.0f ? 1.0f - std::fabs(x) : 0.0f;
      tap.weights.push_back(w);
      sum += w;
    }
    for (float& w : tap.weights) w /= sum;
  }
  return taps;
}

/// `image::imageops::resize(gray, width, height, FilterType::Triangle)` (image 0.25.10): a copy when
/// the size is unchanged, zeros for an empty input.
Gray TriangleResize(const Gray& in, int32_t width, int32_t height) {
  Gray out{width, height, std::vector<uint8_t>(static_cast<size_t>(width) * height, 0)};
  if (in.width == 0 || in.height == 0) return out;
  if (in.width == width && in.height == height) return in;
  const std::vector<Tap> vertical = TriangleTaps(in.height, height);
  std::vector<float> mid(static_cast<size_t>(height) * in.width);
  for (int32_t y = 0; y < height; ++y) {
    const Tap& tap = vertical[y];
    for (int32_t x = 0; x < in.width; ++x) {
      float t = 0.0f;
      for (size_t i = 0; i < tap.weights.size(); ++i) {
        const float product =
            static_cast<float>(in.at(x, tap.left + static_cast<int32_t>(i))) * tap.weights[i];
        t += product;
      }
      mid[static_cast<size_t>(y) * in.width + x] = t;
    }
  }
  const std::vector<Tap> horizontal = TriangleTaps(in.width, width);
  for (int32_t x = 0; x < width; ++x) {
    const Tap& tap = horizontal[x];
    for (int32_t y = 0; y < height; ++y) {
      float t = 0.0f;
      for (size_t i = 0; i < tap.weights.size(); ++i) {
        const float product = mid[static_cast<size_t>(y) * in.width + tap.left + i] * tap.weights[i];
        t += product;
      }
      out.pixels[static_cast<size_t>(y) * width + x] =
          static_cast<uint8_t>(std::round(std::clamp(t, 0.0f, 255.0f)));
    }
  }
  return out;
}

using Bits = std::vector<bool>;

/// Daft's bits_to_bytes: MSB first from byte 0, zero padding at the end.
void AppendPacked(const Bits& bits, std::vector<uint8_t>* out) {
  const size_t start = out->size();
  out->resize(start + (bits.size() + 7) / 8, 0);
  for (size_t i = 0; i < bits.size(); ++i) {
    if (bits[i]) (*out)[start + i / 8] |= static_cast<uint8_t>(0x80u >> (i % 8));
  }
}

Bits AHash(const Gray& gray, int32_t hs) {
  const Gray small = TriangleResize(gray, hs, hs);
  int64_t sum = 0;
  for (uint8_t p : small.pixels) sum += p;
  const int64_t n = static_cast<int64_t>(small.pixels.size());
  Bits bits(small.pixels.size());
  // p > sum / n, exactly (Daft's f64 mean of integers below 2^53 compares the same way).
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = int64_t{small.pixels[i]} * n > sum;
  return bits;
}

Bits DHash(const Gray& gray, int32_t hs) {
  const Gray small = TriangleResize(gray, hs + 1, hs);
  Bits bits(static_cast<size_t>(hs) * hs);
  for (int32_t r = 0; r < hs; ++r) {
    for (int32_t c = 0; c < hs; ++c)
      bits[static_cast<size_t>(r) * hs + c] = small.at(c, r) < small.at(c + 1, r);
  }
  return bits;
}

Bits DHashVertical(const Gray& gray, int32_t hs) {
  const Gray small = TriangleResize(gray, hs, hs + 1);
  Bits bits(static_cast<size_t>(hs) * hs);
  for (int32_t r = 0; r < hs; ++r) {
    for (int32_t c = 0; c < hs; ++c)
      bits[static_cast<size_t>(r) * hs + c] = small.at(c, r + 1) > small.at(c, r);
  }
  return bits;
}

/// The first `count` DCT-II coefficients (y[k] = 2 sum_j x[j] cos(pi k (2j + 1) / 2N)) of `x`.
/// For a power-of-two N, Daft uses rustfft; we sum in long double (the exactly rounded value up to
/// the FFT's own rounding). Otherwise Daft sums directly in f64 (dct1d_naive), and so do we, in its
/// order of operations, which gives its bits exactly.
class Dct {
 public:
  Dct(int32_t n, int32_t count) : n_(n), count_(count), fft_(std::has_single_bit(static_cast<uint32_t>(n))) {
    const size_t size = static_cast<size_t>(count) * n;
    if (fft_) {
      precise_.resize(size);
      for (int32_t k = 0; k < count; ++k) {
        for (int32_t j = 0; j < n; ++j) {
          precise_[static_cast<size_t>(k) * n + j] =
              std::cos(std::numbers::pi_v<long double> * k * (2 * j + 1) / (2.0L * n));
        }
      }
    } else {
      naive_.resize(size);
      const double pi_over_2n = std::numbers::pi / static_cast<double>(2 * n);
      for (int32_t k = 0; k < count; ++k) {
        for (int32_t j = 0; j < n; ++j) {
          naive_[static_cast<size_t>(k) * n + j] =
              std::cos(pi_over_2n * static_cast<double>(2 * j + 1) * static_cast<double>(k));
        }
      }
    }
  }

  bool fft() const { return fft_; }

  /// Coefficient k of x[0], x[stride], ..., x[(n - 1) * stride].
  double operator()(const double* x, size_t stride, int32_t k) const {
    if (fft_) {
      long double s = 0;
      for (int32_t j = 0; j < n_; ++j) s += precise_[static_cast<size_t>(k) * n_ + j] * x[j * stride];
      return static_cast<double>(2 * s);
    }
    double s = 0;
    for (int32_t j = 0; j < n_; ++j) {
      const double term = x[j * stride] * naive_[static_cast<size_t>(k) * n_ + j];
      s += term;
    }
    return 2.0 * s;
  }

 private:
  int32_t n_, count_;
  bool fft_;
  std::vector<long double> precise_;
  std::vector<double> naive_;
};

/// Row DCT-II of an n x n thumbnail, the first `count` frequencies of every row: [row][k].
std::vector<double> RowDct(const Gray& small, const Dct& dct, int32_t count) {
  const int32_t n = small.width;
  std::vector<double> row(n);
  std::vector<double> out(static_cast<size_t>(n) * count);
  for (int32_t r = 0; r < n; ++r) {
    for (int32_t j = 0; j < n; ++j) row[j] = small.at(j, r);
    for (int32_t k = 0; k < count; ++k) out[static_cast<size_t>(r) * count + k] = dct(row.data(), 1, k);
  }
  return out;
}

/// Sets to exactly 0 the coefficients that are 0 in exact arithmetic: within 1e-12 of `bound`, the
/// largest magnitude the transform can produce. rustfft returns exact zeros for the AC terms of a
/// constant thumbnail, and so do we.
void SnapZeros(std::vector<double>* values, double bound) {
  for (double& v : *values) {
    if (std::fabs(v) <= 1e-12 * bound) v = 0.0;
  }
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t m = values.size() / 2;
  if (values.size() % 2 == 1) return values[m];
  return std::midpoint(values[m - 1], values[m]);
}

Bits PHash(const Gray& gray, int32_t hs) {
  const int32_t n = hs * 4;
  const Gray small = TriangleResize(gray, n, n);
  const Dct dct(n, hs);
  const std::vector<double> rows = RowDct(small, dct, hs);  // [r][k2]
  std::vector<double> low(static_cast<size_t>(hs) * hs);
  for (int32_t k1 = 0; k1 < hs; ++k1) {
    for (int32_t k2 = 0; k2 < hs; ++k2)
      low[static_cast<size_t>(k1) * hs + k2] = dct(rows.data() + k2, hs, k1);
  }
  if (dct.fft()) SnapZeros(&low, 4.0 * n * n * 255);
  const double median = Median(low);
  Bits bits(low.size());
  for (size_t i = 0; i < low.size(); ++i) bits[i] = low[i] > median;
  return bits;
}

Bits PHashSimple(const Gray& gray, int32_t hs) {
  const int32_t n = hs * 4;
  const Gray small = TriangleResize(gray, n, n);
  const Dct dct(n, hs + 1);
  const std::vector<double> rows = RowDct(small, dct, hs + 1);
  std::vector<double> sub;
  sub.reserve(static_cast<size_t>(hs) * hs);
  for (int32_t r = 0; r < hs; ++r) {
    for (int32_t c = 1; c <= hs; ++c) sub.push_back(rows[static_cast<size_t>(r) * (hs + 1) + c]);
  }
  if (dct.fft()) SnapZeros(&sub, 2.0 * n * 255);
  double sum = 0;
  for (double v : sub) sum += v;
  const double mean = sum / static_cast<double>(sub.size());
  Bits bits(sub.size());
  for (size_t i = 0; i < sub.size(); ++i) bits[i] = sub[i] > mean;
  return bits;
}

// ---- whash: Daft's Haar steps, in its order of operations ----

constexpr double kSqrt2 = std::numbers::sqrt2;

/// A row-major rows x cols matrix.
struct Matrix {
  size_t rows = 0, cols = 0;
  std::vector<double> v;
  double& at(size_t r, size_t c) { return v[r * cols + c]; }
  double at(size_t r, size_t c) const { return v[r * cols + c]; }
};

Matrix Zeros(size_t rows, size_t cols) { return Matrix{rows, cols, std::vector<double>(rows * cols, 0.0)}; }

/// Haar along axis 0 (down columns): lo, hi of rows / 2.
std::pair<Matrix, Matrix> DwtAxis0(const Matrix& x) {
  const size_t half = x.rows / 2;
  Matrix lo = Zeros(half, x.cols), hi = Zeros(half, x.cols);
  // Row pairs outer, columns inner: contiguous (a column walk with a power-of-two stride thrashes
  // the cache); every value is computed independently, so the order does not change the result.
  for (size_t i = 0; i < half; ++i) {
    for (size_t c = 0; c < x.cols; ++c) {
      lo.at(i, c) = (x.at(2 * i, c) + x.at(2 * i + 1, c)) / kSqrt2;
      hi.at(i, c) = (x.at(2 * i, c) - x.at(2 * i + 1, c)) / kSqrt2;
    }
  }
  return {std::move(lo), std::move(hi)};
}

/// Haar along axis 1 (along rows): lo, hi of cols / 2.
std::pair<Matrix, Matrix> DwtAxis1(const Matrix& x) {
  const size_t half = x.cols / 2;
  Matrix lo = Zeros(x.rows, half), hi = Zeros(x.rows, half);
  for (size_t r = 0; r < x.rows; ++r) {
    for (size_t i = 0; i < half; ++i) {
      lo.at(r, i) = (x.at(r, 2 * i) + x.at(r, 2 * i + 1)) / kSqrt2;
      hi.at(r, i) = (x.at(r, 2 * i) - x.at(r, 2 * i + 1)) / kSqrt2;
    }
  }
  return {std::move(lo), std::move(hi)};
}

Matrix IdwtAxis0(const Matrix& lo, const Matrix& hi) {
  Matrix out = Zeros(lo.rows * 2, lo.cols);
  for (size_t i = 0; i < lo.rows; ++i) {
    for (size_t c = 0; c < lo.cols; ++c) {
      out.at(2 * i, c) = (lo.at(i, c) + hi.at(i, c)) / kSqrt2;
      out.at(2 * i + 1, c) = (lo.at(i, c) - hi.at(i, c)) / kSqrt2;
    }
  }
  return out;
}

Matrix IdwtAxis1(const Matrix& lo, const Matrix& hi) {
  Matrix out = Zeros(lo.rows, lo.cols * 2);
  for (size_t r = 0; r < lo.rows; ++r) {
    for (size_t i = 0; i < lo.cols; ++i) {
      out.at(r, 2 * i) = (lo.at(r, i) + hi.at(r, i)) / kSqrt2;
      out.at(r, 2 * i + 1) = (lo.at(r, i) - hi.at(r, i)) / kSqrt2;
    }
  }
  return out;
}

struct Details {
  Matrix lh, hl, hh;
};

/// wavedec2: the coarsest LL and the detail bands, finest first.
Matrix Wavedec2(Matrix x, int32_t levels, std::vector<Details>* details) {
  for (int32_t l = 0; l < levels; ++l) {
    auto [col_lo, col_hi] = DwtAxis0(x);
    auto [ll, lh] = DwtAxis1(col_lo);
    auto [hl, hh] = DwtAxis1(col_hi);
    if (details != nullptr) details->push_back(Details{std::move(lh), std::move(hl), std::move(hh)});
    x = std::move(ll);
  }
  return x;
}

Bits WHash(const Gray& gray, int32_t hs) {
  const int32_t min_dim = std::min(gray.width, gray.height);
  const int32_t natural_log2 = static_cast<int32_t>(std::floor(std::log2(static_cast<double>(min_dim))));
  const int32_t scale = std::max(int32_t{1} << natural_log2, hs);
  const int32_t ll_max_level = std::bit_width(static_cast<uint32_t>(scale)) - 1;
  const int32_t hash_level = std::bit_width(static_cast<uint32_t>(hs)) - 1;
  const Gray small = TriangleResize(gray, scale, scale);
  Matrix pixels = Zeros(scale, scale);
  for (size_t i = 0; i < small.pixels.size(); ++i) pixels.v[i] = small.pixels[i] / 255.0;

  std::vector<Details> details;
  Matrix current = Wavedec2(std::move(pixels), ll_max_level, &details);
  std::fill(current.v.begin(), current.v.end(), 0.0);
  for (auto it = details.rbegin(); it != details.rend(); ++it) {
    Matrix col_lo = IdwtAxis1(current, it->lh);
    Matrix col_hi = IdwtAxis1(it->hl, it->hh);
    current = IdwtAxis0(col_lo, col_hi);
  }
  const Matrix ll = Wavedec2(std::move(current), ll_max_level - hash_level, nullptr);

  double min_v = INFINITY, max_v = -INFINITY;
  for (double v : ll.v) {
    min_v = std::min(min_v, v);
    max_v = std::max(max_v, v);
  }
  const double range = max_v - min_v;
  std::vector<double> normalized(ll.v.size(), 0.0);
  if (range != 0.0) {
    for (size_t i = 0; i < ll.v.size(); ++i) normalized[i] = (ll.v[i] - min_v) / range;
  }
  double sum = 0;
  for (double v : normalized) sum += v;
  const double mean = sum / static_cast<double>(normalized.size());
  Bits bits(normalized.size());
  for (size_t i = 0; i < normalized.size(); ++i) bits[i] = normalized[i] > mean;
  return bits;
}

/// crop_imm of the grayscale image (Daft crops the decoded image, then converts each crop; the
/// conversion is per pixel, so cropping the gray image is the same).
Gray Crop(const Gray& gray, int32_t x0, int32_t y0, int32_t w, int32_t h) {
  Gray out{w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h)};
  for (int32_t y = 0; y < h; ++y) {
    for (int32_t x = 0; x < w; ++x) out.pixels[static_cast<size_t>(y) * w + x] = gray.at(x0 + x, y0 + y);
  }
  return out;
}

void CropResistant(const Gray& gray, int32_t hs, int32_t segments, std::vector<uint8_t>* out) {
  const int64_t w = gray.width, h = gray.height;
  for (int64_t row = 0; row < segments; ++row) {
    for (int64_t col = 0; col < segments; ++col) {
      const int64_t x0 = col * w / segments, x1 = (col + 1) * w / segments;
      const int64_t y0 = row * h / segments, y1 = (row + 1) * h / segments;
      const Gray seg = Crop(gray, static_cast<int32_t>(x0), static_cast<int32_t>(y0),
                            static_cast<int32_t>(x1 - x0), static_cast<int32_t>(y1 - y0));
      AppendPacked(PHash(seg, hs), out);
    }
  }
}

/// Pillow's integer RGB -> HSV as Daft writes it (rgb_to_pillow_hsv): hue and saturation.
std::pair<int32_t, int32_t> PillowHueSaturation(int32_t r, int32_t g, int32_t b) {
  const int32_t maxc = std::max({r, g, b});
  const int32_t minc = std::min({r, g, b});
  const int32_t delta = maxc - minc;
  if (maxc == 0) return {0, 0};
  const int32_t s = 255 * delta / maxc;
  if (delta == 0) return {0, s};
  const int32_t divisor = 6 * delta;
  int32_t h_raw;
  if (maxc == r) {
    h_raw = (g - b) * 255;
  } else if (maxc == g) {
    h_raw = 85 * divisor + (b - r) * 255;
  } else {
    h_raw = 170 * divisor + (r - g) * 255;
  }
  int32_t h;
  if (h_raw >= 0) {
    h = h_raw / divisor;
  } else {
    int32_t q = h_raw / divisor;
    if (q * divisor != h_raw) --q;  // floor division (Rust's div_euclid for a positive divisor)
    h = q + 255;
  }
  return {h & 0xFF, s & 0xFF};
}

int HueBin(int32_t h) {
  if (h <= 42) return 0;
  if (h <= 84) return 1;
  if (h <= 127) return 2;
  if (h <= 169) return 3;
  if (h <= 212) return 4;
  return 5;
}

/// Daft's `round(0.114 b + 0.299 r + 0.587 g) < 32` with its two fused multiply-adds. std::fma is a
/// slow library call without hardware FMA, so it only settles values within 1e-9 of the 31.5 edge.
bool IsBlack(int32_t r, int32_t g, int32_t b) {
  const double approx = 0.299 * r + 0.587 * g + 0.114 * b;
  if (std::fabs(approx - 31.5) > 1e-9) return approx < 31.5;
  return std::round(std::fma(0.114, b, std::fma(0.299, r, 0.587 * g))) < 32;
}

void ColorHash(const ImageView& view, int32_t binbits, std::vector<uint8_t>* out) {
  const int32_t channels = view.channels();
  const int64_t n_pixels = int64_t{view.width} * view.height;
  int64_t n_black = 0, n_gray = 0, n_colors = 0;
  int64_t faint[6] = {}, bright[6] = {};
  constexpr double kTwoThirds = 256.0 * 2.0 / 3.0;
  for (int64_t i = 0; i < n_pixels; ++i) {
    const uint8_t* px = view.data + i * channels;
    // to_rgb8: L and LA repeat L; RGBA drops alpha.
    const int32_t r = px[0];
    const int32_t g = channels < 3 ? px[0] : px[1];
    const int32_t b = channels < 3 ? px[0] : px[2];
    const auto [h, s] = PillowHueSaturation(r, g, b);
    const bool is_black = IsBlack(r, g, b);
    const bool is_gray = !is_black && s < 85;
    if (is_black) {
      ++n_black;
    } else if (is_gray) {
      ++n_gray;
    } else {
      ++n_colors;
      if (s < kTwoThirds) {
        ++faint[HueBin(h)];
      } else if (s > kTwoThirds) {
        ++bright[HueBin(h)];
      }
    }
  }
  const double frac_black = static_cast<double>(n_black) / static_cast<double>(n_pixels);
  const double frac_gray = static_cast<double>(n_gray) / static_cast<double>(n_pixels);
  const uint64_t c = static_cast<uint64_t>(std::max<int64_t>(n_colors, 1));
  const uint64_t maxvalue = uint64_t{1} << binbits;
  const uint64_t maxval = maxvalue - 1;
  uint64_t values[14];
  values[0] = std::min(static_cast<uint64_t>(frac_black * static_cast<double>(maxvalue)), maxval);
  values[1] = std::min(static_cast<uint64_t>(frac_gray * static_cast<double>(maxvalue)), maxval);
  for (int j = 0; j < 6; ++j) {
    values[2 + j] = std::min(static_cast<uint64_t>(faint[j]) * maxvalue / c, maxval);
    values[8 + j] = std::min(static_cast<uint64_t>(bright[j]) * maxvalue / c, maxval);
  }
  Bits bits;
  bits.reserve(14 * static_cast<size_t>(binbits));
  for (uint64_t v : values) {
    for (int32_t i = 0; i < binbits; ++i) {
      const int32_t k = binbits - i - 1;
      bits.push_back((v >> k) % (uint64_t{1} << (k + 1)) != 0);
    }
  }
  AppendPacked(bits, out);
}

std::vector<uint8_t> HashOne(const ImageView& view, const Spec& spec) {
  std::vector<uint8_t> out;
  if (spec.method == Method::kColorHash) {
    ColorHash(view, spec.binbits, &out);
    return out;
  }
  const Gray gray = ToLuma(view);
  const int32_t hs = spec.hash_size;
  switch (spec.method) {
    case Method::kAHash:
      AppendPacked(AHash(gray, hs), &out);
      break;
    case Method::kDHash:
      AppendPacked(DHash(gray, hs), &out);
      break;
    case Method::kDHashVertical:
      AppendPacked(DHashVertical(gray, hs), &out);
      break;
    case Method::kPHash:
      AppendPacked(PHash(gray, hs), &out);
      break;
    case Method::kPHashSimple:
      AppendPacked(PHashSimple(gray, hs), &out);
      break;
    case Method::kWHash:
      AppendPacked(WHash(gray, hs), &out);
      break;
    case Method::kCropResistant:
      CropResistant(gray, hs, spec.segments, &out);
      break;
    case Method::kColorHash:
      break;
  }
  return out;
}

class ImageHashDaft : public ScalarFunction {
 public:
  std::string name() const override { return kName; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(ExpectArgs(kName, 1, types.size()));
    ARROW_RETURN_NOT_OK(ExpectImage(kName, types[0], exprs[0]));
    ARROW_ASSIGN_OR_RAISE(auto spec, ParseSpec(options));
    return arrow::fixed_size_binary(static_cast<int32_t>(OutputBytes(spec)));
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto spec, ParseSpec(options));
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto reader, ImageArrayReader::Make(input));
    const int32_t num_bytes = static_cast<int32_t>(OutputBytes(spec));
    arrow::FixedSizeBinaryBuilder out(arrow::fixed_size_binary(num_bytes));
    ARROW_RETURN_NOT_OK(out.Reserve(reader.length()));
    for (int64_t i = 0; i < reader.length(); ++i) {
      if (reader.IsNull(i)) {
        out.UnsafeAppendNull();
        continue;
      }
      ARROW_ASSIGN_OR_RAISE(auto view, reader.View(i));
      if (view.width <= 0 || view.height <= 0) {
        return arrow::Status::Invalid(kName, ": row ", i, " is an empty image (", view.width, "x",
                                      view.height, ")");
      }
      const std::vector<uint8_t> hash = HashOne(view, spec);
      if (static_cast<int64_t>(hash.size()) != num_bytes) {
        return arrow::Status::UnknownError(kName, ": row ", i, " hashed to ", hash.size(),
                                           " bytes, expected ", num_bytes);
      }
      out.UnsafeAppend(hash.data());
    }
    return out.Finish();
  }
};

}  // namespace

arrow::Status RegisterImageHashDaft() {
  return FunctionRegistry::Global()->Register(std::make_shared<ImageHashDaft>());
}

}  // namespace ketch::image
