// hash(x[, seed]; hash_function): Daft 0.7.26's `hash` (daft-functions src/hash.rs), the same
// UInt64 values for the same input. The optional second argument is the seed: an integer column or
// literal, cast to UInt64 (a null seed counts as 0); without it each hash function uses Daft's
// unseeded default. Byte rules in hash_kernels.cc.

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <vector>

#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/math/hash_kernels.h"
#include "ketch/functions/math/math_functions.h"

namespace ketch::math {
namespace {

class HashFunction : public ScalarFunction {
 public:
  std::string name() const override { return "hash"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& options) const override {
    if (arg_types.empty() || arg_types.size() > 2) {
      return arrow::Status::Invalid("hash takes a value and an optional seed, got ", arg_types.size(),
                                    " arguments");
    }
    ARROW_RETURN_NOT_OK(Kind(options).status());
    if (arg_types.size() == 2) {
      const auto seed_id = arg_types[1]->id();
      if (!(arrow::is_integer(seed_id) || seed_id == arrow::Type::NA)) {
        return arrow::Status::TypeError("hash: seed must be an integer, got ", arg_exprs[1]->ToString(),
                                        " of type ", arg_types[1]->ToString());
      }
    }
    return arrow::uint64();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(const HashKind kind, Kind(options));
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    if (args.size() < 2) return HashArray(*input, nullptr, kind);
    ARROW_ASSIGN_OR_RAISE(auto seed_array, ToArray(args[1], ctx.num_rows));
    auto cast = arrow::compute::Cast(*seed_array, arrow::uint64());
    if (!cast.ok()) {
      return arrow::Status::Invalid("hash: seed must be a non-negative integer below 2**64 (",
                                    cast.status().message(), ")");
    }
    const auto& seeds = static_cast<const arrow::UInt64Array&>(**cast);
    std::vector<uint64_t> values(seeds.length());
    for (int64_t i = 0; i < seeds.length(); ++i) values[i] = seeds.IsNull(i) ? 0 : seeds.Value(i);
    return HashArray(*input, values.data(), kind);
  }

 private:
  static arrow::Result<HashKind> Kind(const FunctionOptions& options) {
    ARROW_ASSIGN_OR_RAISE(auto name, StringOption(options, "hash_function", "xxhash", "hash"));
    return ParseHashKind(name, "hash");
  }
};

}  // namespace

arrow::Status RegisterHashFunction() {
  return FunctionRegistry::Global()->Register(std::make_shared<HashFunction>());
}

}  // namespace ketch::math
