// random_int(; low, high, seed): a uniform int64 in [low, high] per row, reproducible for the same seed
// and row layout (see random_functions.h for the generator and the interval reduction).

#include <arrow/api.h>

#include "ketch/common/splitmix64.h"
#include "ketch/expr/function_registry.h"
#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/random/random_functions.h"

namespace ketch::random {
namespace {

struct Range {
  int64_t low;
  int64_t high;
  uint64_t seed;
};

arrow::Result<Range> ReadRange(const FunctionOptions& options) {
  Range r;
  ARROW_ASSIGN_OR_RAISE(r.low, GetIntOption(options, "low", "random_int"));
  ARROW_ASSIGN_OR_RAISE(r.high, GetIntOption(options, "high", "random_int"));
  ARROW_ASSIGN_OR_RAISE(auto seed, IntOption(options, "seed", 0, "random_int"));
  if (r.low > r.high) {
    return arrow::Status::Invalid("random_int: low (", r.low, ") must not be greater than high (", r.high,
                                  ")");
  }
  r.seed = static_cast<uint64_t>(seed);
  return r;
}

class RandomIntFunction : public ScalarFunction {
 public:
  std::string name() const override { return "random_int"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& options) const override {
    if (!arg_types.empty()) return CannotApply(name(), arg_types, arg_exprs, "random_int takes no arguments");
    ARROW_RETURN_NOT_OK(ReadRange(options).status());
    return arrow::int64();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>&, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto r, ReadRange(options));
    // The number of values in [low, high], minus one (fits in uint64 even for the full int64 range).
    const uint64_t span = static_cast<uint64_t>(r.high) - static_cast<uint64_t>(r.low);
    const uint64_t stream = SplitMix64(r.seed);
    arrow::Int64Builder out;
    ARROW_RETURN_NOT_OK(out.Reserve(ctx.num_rows));
    for (int64_t i = 0; i < ctx.num_rows; ++i) {
      const uint64_t row = static_cast<uint64_t>(ctx.SourceRow(i));
      const uint64_t bits =
          SplitMix64(stream ^ SplitMix64(row) ^ (static_cast<uint64_t>(i) * 0xd1b54a32d192ed03ULL));
      uint64_t offset;
      if (span == UINT64_MAX) {
        offset = bits;
      } else {
        offset = static_cast<uint64_t>((static_cast<unsigned __int128>(bits) * (span + 1)) >> 64);
      }
      out.UnsafeAppend(static_cast<int64_t>(static_cast<uint64_t>(r.low) + offset));
    }
    ARROW_ASSIGN_OR_RAISE(auto array, out.Finish());
    return arrow::Datum(array);
  }
};

}  // namespace

arrow::Status RegisterRandomFunctions() {
  return FunctionRegistry::Global()->Register(std::make_shared<RandomIntFunction>());
}

}  // namespace ketch::random
