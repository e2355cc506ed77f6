// simhash(text; ngram_size, hash_function): Daft 0.7.26's SimHash fingerprint (daft-functions
// src/simhash.rs), the same UInt64 values for the same input.
//
// The n-grams are every run of `ngram_size` consecutive characters (Unicode code points, as UTF-8
// bytes); each is hashed with seed 0 (murmurhash3 too, not its default 42; sha1 unseeded), and
// bit i of the fingerprint is set when more n-gram hashes have bit i set than clear. A text with
// fewer than `ngram_size` characters gives 0; null stays null.

#include <arrow/api.h>

#include <array>
#include <string_view>
#include <vector>

#include "ketch/functions/math/hash_kernels.h"
#include "ketch/functions/math/math_functions.h"
#include "ketch/functions/math/ngram_hash_function_internal.h"

namespace ketch::math {
namespace {

struct Settings {
  NgramOptions ngram;

  static arrow::Result<Settings> Read(const FunctionOptions& options) {
    ARROW_ASSIGN_OR_RAISE(auto ngram, ReadNgramOptions(options, "simhash", 3, "xxhash3_64"));
    return Settings{ngram};
  }
};

uint64_t Fingerprint(std::string_view text, const Settings& s, std::vector<size_t>* starts) {
  starts->clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<uint8_t>(text[i]) & 0xc0) != 0x80) starts->push_back(i);  // a code point starts
  }
  const auto chars = static_cast<int64_t>(starts->size());
  if (chars < s.ngram.ngram_size) return 0;
  starts->push_back(text.size());
  // Bit i is set when more than half the n-grams have it: count the ones per bit (a loop the
  // compiler vectorizes), then compare with the number of n-grams.
  std::array<uint32_t, 64> ones{};
  const bool seeded = s.ngram.kind != HashKind::kSha1;
  const int64_t grams = chars - s.ngram.ngram_size + 1;
  for (int64_t c = 0; c < grams; ++c) {
    const size_t begin = (*starts)[c], end = (*starts)[c + s.ngram.ngram_size];
    const uint64_t h = HashBytes(s.ngram.kind, reinterpret_cast<const uint8_t*>(text.data()) + begin,
                                 end - begin, seeded, 0);
    for (int bit = 0; bit < 64; ++bit) ones[bit] += static_cast<uint32_t>((h >> bit) & 1);
  }
  uint64_t out = 0;
  for (int bit = 0; bit < 64; ++bit) {
    if (2 * static_cast<int64_t>(ones[bit]) > grams) out |= uint64_t{1} << bit;
  }
  return out;
}

class SimHashFunction : public NgramHashFunction<Settings> {
 public:
  std::string name() const override { return "simhash"; }

 protected:
  std::shared_ptr<arrow::DataType> OutputType(const Settings&) const override { return arrow::uint64(); }

  arrow::Result<arrow::Datum> Compute(const arrow::LargeStringArray& text, const Settings& s) const override {
    arrow::UInt64Builder builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(text.length()));
    std::vector<size_t> starts;
    for (int64_t row = 0; row < text.length(); ++row) {
      if (text.IsNull(row)) {
        builder.UnsafeAppendNull();
      } else {
        builder.UnsafeAppend(Fingerprint(text.GetView(row), s, &starts));
      }
    }
    return builder.Finish();
  }
};

}  // namespace

arrow::Status RegisterSimHashFunction() {
  return FunctionRegistry::Global()->Register(std::make_shared<SimHashFunction>());
}

}  // namespace ketch::math
