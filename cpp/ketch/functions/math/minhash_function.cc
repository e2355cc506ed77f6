// minhash(text; num_hashes, ngram_size, seed, hash_function): Daft 0.7.26's MinHash signatures
// (crates daft-minhash and daft-functions src/minhash.rs), the same values for the same input.
//
// - Word n-grams: the text's bytes cut at every ASCII space, `ngram_size` words per window,
//   windows advancing one word; the words keep their spaces as they are (no trimming, an empty
//   word between two spaces counts), and a text with fewer words gives one window of all of it.
//   An empty text has no window.
// - Each n-gram hashes to 32 bits: the low 32 bits of the hash function seeded with `seed`
//   (MurmurHash3_x86_32, XXH3_64, XXH64, XXH32), or of the unseeded SHA-1 (first 4 bytes, LE).
// - Permutation i maps h to ((a_i * h + b_i) mod 2^64, then (v + (v >> 61)) & 0xffffffff),
//   Daft's fast remainder by the Mersenne prime 2^61 - 1; a_i in [1, 2^31 - 2] and b_i in
//   [0, 2^31 - 2] come from the crate fastrand 2's wyrand generator seeded with `seed`
//   (all a's, then all b's; ranged draws by Lemire's multiply-shift with rejection).
// - Signature element i is the minimum over the n-grams, starting from 0xffffffff.

#include <arrow/api.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "ketch/functions/math/hash_kernels.h"
#include "ketch/functions/math/math_functions.h"
#include "ketch/functions/math/ngram_hash_function_internal.h"

namespace ketch::math {
namespace {

constexpr uint64_t kMaxHash = 0xffffffffULL;

// fastrand 2.x (github.com/smol-rs/fastrand, src/lib.rs): wyrand, and u64(low..high) drawn as
// low + gen_mod(high - low).
class WyRand {
 public:
  explicit WyRand(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    state_ += 0x2d358dccaa6c78a5ULL;
    const auto t = static_cast<unsigned __int128>(state_) * (state_ ^ 0x8bb84b93962eacc9ULL);
    return static_cast<uint64_t>(t) ^ static_cast<uint64_t>(t >> 64);
  }

  uint64_t Below(uint64_t n) {
    auto product = static_cast<unsigned __int128>(Next()) * n;
    if (static_cast<uint64_t>(product) < n) {
      const uint64_t threshold = (0 - n) % n;
      while (static_cast<uint64_t>(product) < threshold) product = static_cast<unsigned __int128>(Next()) * n;
    }
    return static_cast<uint64_t>(product >> 64);
  }

 private:
  uint64_t state_;
};

struct Settings {
  int64_t num_hashes;
  uint32_t seed;
  NgramOptions ngram;

  static arrow::Result<Settings> Read(const FunctionOptions& options) {
    Settings s;
    ARROW_ASSIGN_OR_RAISE(s.num_hashes, GetIntOption(options, "num_hashes", "minhash"));
    if (s.num_hashes <= 0)
      return arrow::Status::Invalid("minhash: num_hashes must be > 0, got ", s.num_hashes);
    ARROW_ASSIGN_OR_RAISE(s.ngram, ReadNgramOptions(options, "minhash", std::nullopt, "murmurhash3"));
    ARROW_ASSIGN_OR_RAISE(auto seed, IntOption(options, "seed", 1, "minhash"));
    if (seed < 0 || seed > 0xffffffffLL) {
      return arrow::Status::Invalid("minhash: seed must be in [0, 2**32), got ", seed);
    }
    s.seed = static_cast<uint32_t>(seed);
    return s;
  }
};

// Calls fn(window) for each of Daft's word windows (daft-minhash src/windowed.rs).
template <typename Fn>
void ForEachWindow(std::string_view text, int64_t size, std::vector<size_t>* spaces, Fn&& fn) {
  if (text.empty()) return;
  spaces->clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == ' ') spaces->push_back(i);
  }
  const auto words = static_cast<int64_t>(spaces->size()) + 1;
  if (words <= size) {
    fn(text);
    return;
  }
  for (int64_t w = 0; w + size <= words; ++w) {
    const size_t start = w == 0 ? 0 : (*spaces)[w - 1] + 1;
    const size_t end = w + size == words ? text.size() : (*spaces)[w + size - 1];
    fn(text.substr(start, end - start));
  }
}

class MinHashFunction : public NgramHashFunction<Settings> {
 public:
  std::string name() const override { return "minhash"; }

 protected:
  std::shared_ptr<arrow::DataType> OutputType(const Settings& s) const override {
    return arrow::fixed_size_list(arrow::uint32(), static_cast<int32_t>(s.num_hashes));
  }

  arrow::Result<arrow::Datum> Compute(const arrow::LargeStringArray& text, const Settings& s) const override {
    // a < 2^31 and h < 2^32, so a * h + b < 2^63 never wraps: 32-bit operands widened to 64 bits let
    // the compiler use the packed 32x32->64 multiply.
    std::vector<uint32_t> a(s.num_hashes), b(s.num_hashes);
    WyRand rng(s.seed);
    for (auto& v : a) v = static_cast<uint32_t>(1 + rng.Below(0x7fffffffULL - 1));
    for (auto& v : b) v = static_cast<uint32_t>(rng.Below(0x7fffffffULL));
    // Daft seeds every hash function with `seed` except SHA-1 (BuildHasherDefault<Sha1Hasher>).
    const bool seeded = s.ngram.kind != HashKind::kSha1;

    auto values = std::make_shared<arrow::UInt32Builder>();
    arrow::FixedSizeListBuilder builder(arrow::default_memory_pool(), values,
                                        static_cast<int32_t>(s.num_hashes));
    ARROW_RETURN_NOT_OK(values->Reserve(text.length() * s.num_hashes));
    std::vector<size_t> spaces;
    std::vector<uint32_t> mins(s.num_hashes);
    for (int64_t row = 0; row < text.length(); ++row) {
      if (text.IsNull(row)) {
        ARROW_RETURN_NOT_OK(builder.AppendNull());
        continue;
      }
      std::fill(mins.begin(), mins.end(), static_cast<uint32_t>(kMaxHash));
      ForEachWindow(text.GetView(row), s.ngram.ngram_size, &spaces, [&](std::string_view gram) {
        const auto h = static_cast<uint32_t>(HashBytes(
            s.ngram.kind, reinterpret_cast<const uint8_t*>(gram.data()), gram.size(), seeded, s.seed));
        for (int64_t i = 0; i < s.num_hashes; ++i) {
          const uint64_t v = static_cast<uint64_t>(h) * a[i] + b[i];
          mins[i] = std::min(mins[i], static_cast<uint32_t>(v + (v >> 61)));
        }
      });
      ARROW_RETURN_NOT_OK(builder.Append());
      for (int64_t i = 0; i < s.num_hashes; ++i) values->UnsafeAppend(mins[i]);
    }
    return builder.Finish();
  }
};

}  // namespace

arrow::Status RegisterMinHashFunction() {
  return FunctionRegistry::Global()->Register(std::make_shared<MinHashFunction>());
}

}  // namespace ketch::math
