// hamming_distance(left, right): Daft 0.7.26's bit distance between two fingerprints (simhash
// values, image hashes): UInt32, the population count of left XOR right. Integers compare as
// UInt64 (a negative value has no UInt64 and gives null, as in Daft); fixed-size binaries of the
// same width compare byte by byte. Null in either gives null.

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <bit>

#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/math/math_functions.h"

namespace ketch::math {
namespace {

class HammingDistanceFunction : public ScalarFunction {
 public:
  std::string name() const override { return "hamming_distance"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& options) const override {
    if (arg_types.size() != 2) {
      return arrow::Status::Invalid("hamming_distance takes 2 arguments, got ", arg_types.size());
    }
    const auto& left = *arg_types[0];
    const auto& right = *arg_types[1];
    const bool ints = IsIntegerLike(left.id()) && IsIntegerLike(right.id());
    const bool binaries =
        left.id() == arrow::Type::FIXED_SIZE_BINARY && right.id() == arrow::Type::FIXED_SIZE_BINARY;
    if (binaries && left.byte_width() != right.byte_width()) {
      return arrow::Status::TypeError("hamming_distance: FixedSizeBinary sizes must match, got ",
                                      left.ToString(), " (", arg_exprs[0]->ToString(), ") and ",
                                      right.ToString(), " (", arg_exprs[1]->ToString(), ")");
    }
    if (!ints && !binaries) {
      return arrow::Status::TypeError(
          "hamming_distance requires both inputs to be integers or FixedSizeBinary of the same size, got ",
          arg_exprs[0]->ToString(), " of type ", left.ToString(), " and ", arg_exprs[1]->ToString(),
          " of type ", right.ToString());
    }
    return arrow::uint32();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto left, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto right, ToArray(args[1], ctx.num_rows));
    arrow::UInt32Builder builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(ctx.num_rows));
    if (left->type_id() == arrow::Type::FIXED_SIZE_BINARY) {
      const auto& a = static_cast<const arrow::FixedSizeBinaryArray&>(*left);
      const auto& b = static_cast<const arrow::FixedSizeBinaryArray&>(*right);
      for (int64_t i = 0; i < ctx.num_rows; ++i) {
        if (a.IsNull(i) || b.IsNull(i)) {
          builder.UnsafeAppendNull();
          continue;
        }
        uint32_t bits = 0;
        for (int32_t k = 0; k < a.byte_width(); ++k)
          bits += std::popcount<uint8_t>(a.GetValue(i)[k] ^ b.GetValue(i)[k]);
        builder.UnsafeAppend(bits);
      }
      return builder.Finish();
    }
    ARROW_ASSIGN_OR_RAISE(auto a, AsUInt64(left));
    ARROW_ASSIGN_OR_RAISE(auto b, AsUInt64(right));
    for (int64_t i = 0; i < ctx.num_rows; ++i) {
      if (a->IsNull(i) || b->IsNull(i)) {
        builder.UnsafeAppendNull();
      } else {
        builder.UnsafeAppend(static_cast<uint32_t>(std::popcount(a->Value(i) ^ b->Value(i))));
      }
    }
    return builder.Finish();
  }

 private:
  static bool IsIntegerLike(arrow::Type::type id) { return arrow::is_integer(id) || id == arrow::Type::NA; }

  // Daft casts to UInt64 and a negative value becomes null (no error).
  static arrow::Result<std::shared_ptr<arrow::UInt64Array>> AsUInt64(
      const std::shared_ptr<arrow::Array>& values) {
    std::shared_ptr<arrow::Array> source = values;
    if (arrow::is_signed_integer(values->type_id())) {
      ARROW_ASSIGN_OR_RAISE(auto negative,
                            arrow::compute::CallFunction("less", {values, arrow::MakeScalar(int64_t{0})}));
      ARROW_ASSIGN_OR_RAISE(
          auto masked,
          arrow::compute::CallFunction("if_else", {negative, arrow::MakeNullScalar(values->type()), values}));
      source = masked.make_array();
    }
    ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(*source, arrow::uint64()));
    return std::static_pointer_cast<arrow::UInt64Array>(cast);
  }
};

}  // namespace

arrow::Status RegisterHammingDistanceFunction() {
  return FunctionRegistry::Global()->Register(std::make_shared<HammingDistanceFunction>());
}

}  // namespace ketch::math
