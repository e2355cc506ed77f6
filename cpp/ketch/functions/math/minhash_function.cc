// minhash(text; num_hashes, ngram_size, seed, hash_function): MinHash signatures of each
// string's word n-grams, for near-duplicate detection.
//
// Each string is split on ASCII spaces (empty tokens dropped) into word n-grams of `ngram_size`
// tokens joined by one space (one n-gram of all tokens when there are fewer; "" for no token).
// Each n-gram hashes to 32 bits (MurmurHash3_x86_32 with `seed`, or the low 32 bits of XXH64);
// permutation i maps a hash h to ((a_i * h + b_i) mod (2^61 - 1)) & 0xffffffff, with a_i in
// [1, 2^61 - 2] and b_i in [0, 2^61 - 2] drawn from SplitMix64 seeded with `seed`; signature
// element i is the minimum over the n-grams.

#include <arrow/api.h>

#include <algorithm>
#include <limits>
#include <string_view>
#include <vector>

#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/math/hash_kernels.h"
#include "ketch/functions/math/math_functions.h"

namespace ketch::math {
namespace {

constexpr uint64_t kMersenne61 = (uint64_t{1} << 61) - 1;

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct Settings {
  int64_t num_hashes;
  int64_t ngram_size;
  uint64_t seed;
  bool murmur;
};

arrow::Result<Settings> ReadSettings(const FunctionOptions& options) {
  Settings s;
  ARROW_ASSIGN_OR_RAISE(s.num_hashes, GetIntOption(options, "num_hashes", "minhash"));
  ARROW_ASSIGN_OR_RAISE(s.ngram_size, GetIntOption(options, "ngram_size", "minhash"));
  ARROW_ASSIGN_OR_RAISE(auto seed, IntOption(options, "seed", 1, "minhash"));
  ARROW_ASSIGN_OR_RAISE(auto function, StringOption(options, "hash_function", "murmurhash3", "minhash"));
  if (s.num_hashes <= 0) return arrow::Status::Invalid("minhash: num_hashes must be > 0, got ", s.num_hashes);
  if (s.ngram_size <= 0) return arrow::Status::Invalid("minhash: ngram_size must be > 0, got ", s.ngram_size);
  if (function != "murmurhash3" && function != "xxhash") {
    return arrow::Status::NotImplemented("minhash: hash_function '", function,
                                         "' is not available; use 'murmurhash3' or 'xxhash'");
  }
  s.seed = static_cast<uint64_t>(seed);
  s.murmur = function == "murmurhash3";
  return s;
}

class MinHashFunction : public ScalarFunction {
 public:
  std::string name() const override { return "minhash"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(CheckArgKind(ArgKind::kString, name(), arg_types[0], *arg_exprs[0]));
    ARROW_ASSIGN_OR_RAISE(auto s, ReadSettings(options));
    return arrow::fixed_size_list(arrow::uint32(), static_cast<int32_t>(s.num_hashes));
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto s, ReadSettings(options));
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto strings, arrow::compute::Cast(*input, arrow::large_utf8()));
    const auto& text = static_cast<const arrow::LargeStringArray&>(*strings);

    std::vector<uint64_t> a(s.num_hashes), b(s.num_hashes);
    uint64_t state = s.seed;
    for (int64_t i = 0; i < s.num_hashes; ++i) {
      a[i] = SplitMix64(&state) % (kMersenne61 - 1) + 1;
      b[i] = SplitMix64(&state) % kMersenne61;
    }

    auto values = std::make_shared<arrow::UInt32Builder>();
    arrow::FixedSizeListBuilder builder(arrow::default_memory_pool(), values,
                                        static_cast<int32_t>(s.num_hashes));
    std::vector<std::string_view> tokens;
    std::vector<uint64_t> mins(s.num_hashes);
    std::string gram;
    for (int64_t row = 0; row < text.length(); ++row) {
      if (text.IsNull(row)) {
        ARROW_RETURN_NOT_OK(builder.AppendNull());
        continue;
      }
      const std::string_view value = text.GetView(row);
      tokens.clear();
      size_t start = 0;
      while (start <= value.size()) {
        size_t end = value.find(' ', start);
        if (end == std::string_view::npos) end = value.size();
        if (end > start) tokens.push_back(value.substr(start, end - start));
        start = end + 1;
      }
      const int64_t n = static_cast<int64_t>(tokens.size());
      const int64_t grams = n < s.ngram_size ? 1 : n - s.ngram_size + 1;
      const int64_t width = n < s.ngram_size ? n : s.ngram_size;
      std::fill(mins.begin(), mins.end(), std::numeric_limits<uint64_t>::max());
      for (int64_t g = 0; g < grams; ++g) {
        gram.clear();
        for (int64_t t = 0; t < width; ++t) {
          if (t) gram += ' ';
          gram.append(tokens[g + t]);
        }
        const auto* bytes = reinterpret_cast<const uint8_t*>(gram.data());
        const uint64_t h = s.murmur ? Murmur3_32(bytes, gram.size(), static_cast<uint32_t>(s.seed))
                                    : (Xxh64(bytes, gram.size(), s.seed) & 0xffffffffULL);
        for (int64_t i = 0; i < s.num_hashes; ++i) {
          const auto mixed =
              static_cast<uint64_t>((static_cast<unsigned __int128>(a[i]) * h + b[i]) % kMersenne61);
          mins[i] = std::min<uint64_t>(mins[i], mixed & 0xffffffffULL);
        }
      }
      ARROW_RETURN_NOT_OK(builder.Append());
      ARROW_RETURN_NOT_OK(values->Reserve(s.num_hashes));
      for (int64_t i = 0; i < s.num_hashes; ++i) values->UnsafeAppend(static_cast<uint32_t>(mins[i]));
    }
    return builder.Finish();
  }
};

}  // namespace

arrow::Status RegisterMinHashFunction() {
  return FunctionRegistry::Global()->Register(std::make_shared<MinHashFunction>());
}

}  // namespace ketch::math
