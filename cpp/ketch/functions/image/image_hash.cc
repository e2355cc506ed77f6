// image_hash_imagehash: imagehash-compatible perceptual hashes (average, difference, perceptual, wavelet) as
// a native kernel. Each hash starts from Pillow's exact grayscale + Lanczos thumbnail
// (image_hash_resample.h), then applies imagehash 4.3.2's arithmetic:
// - average:    thumbnail hs x hs, bit = pixel > mean (compared in integers: pixel * n > sum).
// - difference: thumbnail (hs + 1) wide x hs high, bit = right neighbour > left.
// - perceptual: thumbnail 4hs x 4hs, scipy.fftpack.dct type II (unnormalised,
//               y[k] = 2 sum_n x[n] cos(pi k (2n + 1) / 2N)) along axis 0 then axis 1, low hs x hs
//               block, bit = coefficient > numpy.median of the block.
// - wavelet:    thumbnail s x s with s = max(2^floor(log2(min(w, h))), hs), scaled to [0, 1] by /255;
//               pywt.wavedec2('haar') to full depth, LL zeroed, pywt.waverec2; then wavedec2 to
//               log2(s / hs) levels; bit = LL > median. The Haar steps repeat pywt's convolution
//               arithmetic (a = h*x1 + h*x0, d = -h*x1 + h*x0; x0 = h*a + h*d, x1 = h*a - h*d).
// Bits are row-major, packed big-endian like imagehash's hex string (bytes.fromhex(str(hash))).

#include <algorithm>
#include <cmath>
#include <numbers>

#include "ketch/functions/image/image_function_util.h"
#include "ketch/functions/image/image_functions.h"
#include "ketch/functions/image/image_hash_resample.h"

namespace ketch::image {
namespace {

enum class Algorithm { kAverage, kDifference, kPerceptual, kWavelet };

constexpr const char* kName = "image_hash_imagehash";
constexpr int64_t kMaxHashSize = 1024;

struct HashSpec {
  Algorithm algorithm;
  int32_t hash_size;
};

arrow::Result<HashSpec> ParseSpec(const FunctionOptions& options) {
  std::string name = "average";
  if (HasOption(options, "algorithm")) {
    ARROW_ASSIGN_OR_RAISE(name, GetStringOption(options, "algorithm", kName));
  }
  int64_t hash_size = 8;
  if (HasOption(options, "hash_size")) {
    ARROW_ASSIGN_OR_RAISE(hash_size, GetIntOption(options, "hash_size", kName));
  }
  HashSpec spec{};
  if (name == "average") {
    spec.algorithm = Algorithm::kAverage;
  } else if (name == "difference") {
    spec.algorithm = Algorithm::kDifference;
  } else if (name == "perceptual") {
    spec.algorithm = Algorithm::kPerceptual;
  } else if (name == "wavelet") {
    spec.algorithm = Algorithm::kWavelet;
  } else if (name == "crop_resistant") {
    return arrow::Status::NotImplemented(kName, ": algorithm 'crop_resistant' is not supported yet");
  } else {
    return arrow::Status::Invalid(kName, ": algorithm must be one of 'average', 'perceptual', ",
                                  "'difference', 'wavelet', got '", name, "'");
  }
  if (hash_size < 2 || hash_size > kMaxHashSize) {
    return arrow::Status::Invalid(kName, ": hash_size must be in 2..", kMaxHashSize, ", got ", hash_size);
  }
  if (spec.algorithm == Algorithm::kWavelet && (hash_size & (hash_size - 1)) != 0) {
    return arrow::Status::Invalid(kName, ": the wavelet hash needs a power-of-two hash_size, got ",
                                  hash_size);
  }
  spec.hash_size = static_cast<int32_t>(hash_size);
  return spec;
}

int32_t HashBytes(int32_t hash_size) { return (hash_size * hash_size + 7) / 8; }

/// Packs row-major bits like imagehash's hex string: the integer of the bit string, big-endian,
/// left-padded with zero bits to whole bytes.
void PackBits(const std::vector<bool>& bits, uint8_t* out, int32_t num_bytes) {
  std::fill(out, out + num_bytes, 0);
  const size_t pad = static_cast<size_t>(num_bytes) * 8 - bits.size();
  for (size_t i = 0; i < bits.size(); ++i) {
    if (!bits[i]) continue;
    const size_t pos = pad + i;
    out[pos / 8] |= static_cast<uint8_t>(0x80u >> (pos % 8));
  }
}

/// numpy.median: the middle value, or the mean of the two middle values for an even count.
double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t m = values.size() / 2;
  if (values.size() % 2 == 1) return values[m];
  return (values[m - 1] + values[m]) / 2;
}

std::vector<bool> AboveMedian(const std::vector<double>& values) {
  const double median = Median(values);
  std::vector<bool> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) bits[i] = values[i] > median;
  return bits;
}

std::vector<bool> AverageHash(const GrayImage& gray, int32_t hs) {
  const GrayImage small = PillowLanczosResize(gray, hs, hs);
  int64_t sum = 0;
  for (uint8_t p : small.pixels) sum += p;
  const int64_t n = static_cast<int64_t>(small.pixels.size());
  std::vector<bool> bits(small.pixels.size());
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = int64_t{small.pixels[i]} * n > sum;
  return bits;
}

std::vector<bool> DifferenceHash(const GrayImage& gray, int32_t hs) {
  const GrayImage small = PillowLanczosResize(gray, hs + 1, hs);
  std::vector<bool> bits(static_cast<size_t>(hs) * hs);
  for (int32_t r = 0; r < hs; ++r) {
    const uint8_t* row = &small.pixels[static_cast<size_t>(r) * (hs + 1)];
    for (int32_t c = 0; c < hs; ++c) bits[static_cast<size_t>(r) * hs + c] = row[c + 1] > row[c];
  }
  return bits;
}

std::vector<bool> PerceptualHash(const GrayImage& gray, int32_t hs) {
  const int32_t n = hs * 4;
  const GrayImage small = PillowLanczosResize(gray, n, n);
  // cos(pi k (2j + 1) / 2N) for the hs lowest frequencies k; sums in long double, so the result is
  // the exactly rounded DCT wherever scipy's is (see the test notes on degenerate images).
  std::vector<long double> cosines(static_cast<size_t>(hs) * n);
  for (int32_t k = 0; k < hs; ++k) {
    for (int32_t j = 0; j < n; ++j) {
      cosines[static_cast<size_t>(k) * n + j] =
          std::cos(std::numbers::pi_v<long double> * k * (2 * j + 1) / (2.0L * n));
    }
  }
  // Axis 0 (down each column): first[k][c] for k < hs.
  std::vector<double> first(static_cast<size_t>(hs) * n);
  for (int32_t k = 0; k < hs; ++k) {
    for (int32_t c = 0; c < n; ++c) {
      long double s = 0;
      for (int32_t j = 0; j < n; ++j) {
        s += cosines[static_cast<size_t>(k) * n + j] * small.pixels[static_cast<size_t>(j) * n + c];
      }
      first[static_cast<size_t>(k) * n + c] = static_cast<double>(2 * s);
    }
  }
  // Axis 1 (along each row) of the hs kept rows, hs lowest frequencies.
  std::vector<double> low(static_cast<size_t>(hs) * hs);
  for (int32_t r = 0; r < hs; ++r) {
    for (int32_t k = 0; k < hs; ++k) {
      long double s = 0;
      for (int32_t j = 0; j < n; ++j) {
        s += cosines[static_cast<size_t>(k) * n + j] * first[static_cast<size_t>(r) * n + j];
      }
      low[static_cast<size_t>(r) * hs + k] = static_cast<double>(2 * s);
    }
  }
  return AboveMedian(low);
}

/// A square float64 matrix, row-major.
struct Matrix {
  int32_t size = 0;
  std::vector<double> v;
  double& at(int32_t r, int32_t c) { return v[static_cast<size_t>(r) * size + c]; }
  double at(int32_t r, int32_t c) const { return v[static_cast<size_t>(r) * size + c]; }
};

constexpr double kHaar = 0.7071067811865476;

/// One level of pywt.dwt2(x, 'haar') on an even-sized square: axis 0 first, then axis 1.
/// Quadrants: aa (approximation), ad, da, dd; each size/2.
struct Haar2D {
  Matrix aa, ad, da, dd;
};

Haar2D Dwt2(const Matrix& x) {
  const int32_t n = x.size;
  const int32_t m = n / 2;
  // Axis 0 halves the rows; keep full width in temporaries indexed [i][j] with j < n.
  std::vector<double> a_rows(static_cast<size_t>(m) * n), d_rows(static_cast<size_t>(m) * n);
  for (int32_t i = 0; i < m; ++i) {
    for (int32_t j = 0; j < n; ++j) {
      const double x0 = x.at(2 * i, j), x1 = x.at(2 * i + 1, j);
      a_rows[static_cast<size_t>(i) * n + j] = kHaar * x1 + kHaar * x0;
      d_rows[static_cast<size_t>(i) * n + j] = -kHaar * x1 + kHaar * x0;
    }
  }
  auto split_columns = [&](const std::vector<double>& rows, Matrix& lo, Matrix& hi) {
    lo.size = hi.size = m;
    lo.v.resize(static_cast<size_t>(m) * m);
    hi.v.resize(static_cast<size_t>(m) * m);
    for (int32_t i = 0; i < m; ++i) {
      for (int32_t j = 0; j < m; ++j) {
        const double x0 = rows[static_cast<size_t>(i) * n + 2 * j];
        const double x1 = rows[static_cast<size_t>(i) * n + 2 * j + 1];
        lo.at(i, j) = kHaar * x1 + kHaar * x0;
        hi.at(i, j) = -kHaar * x1 + kHaar * x0;
      }
    }
  };
  Haar2D out;
  split_columns(a_rows, out.aa, out.ad);
  split_columns(d_rows, out.da, out.dd);
  return out;
}

/// pywt.idwt2 for 'haar': axis 1 first (aa+ad -> a, da+dd -> d), then axis 0.
Matrix Idwt2(const Haar2D& c) {
  const int32_t m = c.aa.size;
  const int32_t n = 2 * m;
  auto merge_columns = [&](const Matrix& lo, const Matrix& hi) {
    std::vector<double> rows(static_cast<size_t>(m) * n);
    for (int32_t i = 0; i < m; ++i) {
      for (int32_t j = 0; j < m; ++j) {
        const double a = lo.at(i, j), d = hi.at(i, j);
        rows[static_cast<size_t>(i) * n + 2 * j] = kHaar * a + kHaar * d;
        rows[static_cast<size_t>(i) * n + 2 * j + 1] = kHaar * a + -kHaar * d;
      }
    }
    return rows;
  };
  const std::vector<double> a = merge_columns(c.aa, c.ad);
  const std::vector<double> d = merge_columns(c.da, c.dd);
  Matrix x{n, std::vector<double>(static_cast<size_t>(n) * n)};
  for (int32_t i = 0; i < m; ++i) {
    for (int32_t j = 0; j < n; ++j) {
      const double av = a[static_cast<size_t>(i) * n + j], dv = d[static_cast<size_t>(i) * n + j];
      x.at(2 * i, j) = kHaar * av + kHaar * dv;
      x.at(2 * i + 1, j) = kHaar * av + -kHaar * dv;
    }
  }
  return x;
}

int32_t FloorLog2(int64_t v) {
  int32_t level = 0;
  while (v > 1) {
    v >>= 1;
    ++level;
  }
  return level;
}

std::vector<bool> WaveletHash(const GrayImage& gray, int32_t hs) {
  const int32_t natural = int32_t{1} << FloorLog2(std::min(gray.width, gray.height));
  const int32_t scale = std::max(natural, hs);
  const int32_t ll_max_level = FloorLog2(scale);
  const int32_t dwt_level = ll_max_level - FloorLog2(hs);
  const GrayImage small = PillowLanczosResize(gray, scale, scale);
  Matrix pixels{scale, std::vector<double>(small.pixels.size())};
  for (size_t i = 0; i < small.pixels.size(); ++i) pixels.v[i] = small.pixels[i] / 255.;

  // Remove the lowest frequency: full-depth decomposition, LL zeroed, reconstruction.
  std::vector<Haar2D> levels;
  Matrix approx = pixels;
  for (int32_t l = 0; l < ll_max_level; ++l) {
    levels.push_back(Dwt2(approx));
    approx = levels.back().aa;
  }
  for (double& v : approx.v) v *= 0;
  for (int32_t l = ll_max_level - 1; l >= 0; --l) {
    levels[l].aa = approx;
    approx = Idwt2(levels[l]);
  }
  // LL at depth log2(scale / hs).
  for (int32_t l = 0; l < dwt_level; ++l) approx = Dwt2(approx).aa;
  return AboveMedian(approx.v);
}

class ImageHash : public ScalarFunction {
 public:
  std::string name() const override { return kName; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(ExpectArgs(kName, 1, types.size()));
    ARROW_RETURN_NOT_OK(ExpectImage(kName, types[0], exprs[0]));
    ARROW_ASSIGN_OR_RAISE(auto spec, ParseSpec(options));
    return arrow::fixed_size_binary(HashBytes(spec.hash_size));
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto spec, ParseSpec(options));
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto reader, ImageArrayReader::Make(input));
    const int32_t num_bytes = HashBytes(spec.hash_size);
    arrow::FixedSizeBinaryBuilder out(arrow::fixed_size_binary(num_bytes));
    ARROW_RETURN_NOT_OK(out.Reserve(reader.length()));
    std::vector<uint8_t> packed(num_bytes);
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
      const GrayImage gray = ToPillowGray(view);
      std::vector<bool> bits;
      switch (spec.algorithm) {
        case Algorithm::kAverage:
          bits = AverageHash(gray, spec.hash_size);
          break;
        case Algorithm::kDifference:
          bits = DifferenceHash(gray, spec.hash_size);
          break;
        case Algorithm::kPerceptual:
          bits = PerceptualHash(gray, spec.hash_size);
          break;
        case Algorithm::kWavelet:
          bits = WaveletHash(gray, spec.hash_size);
          break;
      }
      PackBits(bits, packed.data(), num_bytes);
      out.UnsafeAppend(packed.data());
    }
    return out.Finish();
  }
};

}  // namespace

arrow::Status RegisterImageHash() {
  return FunctionRegistry::Global()->Register(std::make_shared<ImageHash>());
}

}  // namespace ketch::image
