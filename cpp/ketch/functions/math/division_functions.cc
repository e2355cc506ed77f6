// modulo and floor_divide: Arrow has neither a remainder kernel nor floor division. Integers
// follow Daft (Rust): the quotient truncated toward zero and the remainder with the dividend's
// sign (-7 // 3 == -2, -7 % 3 == -1, so a == (a // b) * b + a % b); floats floor(a / b) and fmod.

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <cmath>
#include <limits>

#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/math/math_functions.h"

namespace ketch::math {
namespace {

enum class DivisionKind { kModulo, kFloorDivide };

template <typename T>
arrow::Status IntegerStep(T a, T b, DivisionKind kind, T* out) {
  if (b == 0) return arrow::Status::Invalid("integer division by zero");
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) {
      if (kind == DivisionKind::kModulo) {
        *out = 0;
        return arrow::Status::OK();
      }
      if (a == std::numeric_limits<T>::min()) return arrow::Status::Invalid("overflow");
      *out = -a;
      return arrow::Status::OK();
    }
    if (kind == DivisionKind::kModulo) {
      *out = a % b;
    } else {
      *out = a / b;  // truncated toward zero, as Daft (Rust) divides integers: -7 // 3 == -2
    }
  } else {
    *out = kind == DivisionKind::kModulo ? a % b : a / b;
  }
  return arrow::Status::OK();
}

template <typename ArrowType>
arrow::Result<std::shared_ptr<arrow::Array>> Divide(const arrow::Array& left, const arrow::Array& right,
                                                    DivisionKind kind, const EvalContext& ctx) {
  using T = typename ArrowType::c_type;
  using ArrayType = arrow::NumericArray<ArrowType>;
  const auto& a = static_cast<const ArrayType&>(left);
  const auto& b = static_cast<const ArrayType&>(right);
  arrow::NumericBuilder<ArrowType> builder;
  ARROW_RETURN_NOT_OK(builder.Reserve(a.length()));
  for (int64_t i = 0; i < a.length(); ++i) {
    if (a.IsNull(i) || b.IsNull(i)) {
      builder.UnsafeAppendNull();
      continue;
    }
    T out;
    if constexpr (std::is_floating_point_v<T>) {
      out = kind == DivisionKind::kModulo ? std::fmod(a.Value(i), b.Value(i))
                                          : std::floor(a.Value(i) / b.Value(i));
    } else {
      auto status = IntegerStep<T>(a.Value(i), b.Value(i), kind, &out);
      if (!status.ok()) {
        return arrow::Status::Invalid(kind == DivisionKind::kModulo ? "modulo" : "floor_divide", ": ",
                                      status.message(), " at source row ", ctx.SourceRow(i), " (", a.Value(i),
                                      kind == DivisionKind::kModulo ? " % " : " // ", b.Value(i), ")");
      }
    }
    builder.UnsafeAppend(out);
  }
  return builder.Finish();
}

class DivisionFunction : public ScalarFunction {
 public:
  explicit DivisionFunction(DivisionKind kind) : kind_(kind) {}

  std::string name() const override { return kind_ == DivisionKind::kModulo ? "modulo" : "floor_divide"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    if (arg_types.size() != 2) return arrow::Status::Invalid(name(), " takes two arguments");
    for (size_t i = 0; i < 2; ++i) {
      ARROW_RETURN_NOT_OK(CheckArgKind(ArgKind::kNumeric, name(), arg_types[i], *arg_exprs[i]));
      if (arrow::is_decimal(arg_types[i]->id())) {
        return arrow::Status::TypeError(name(), " does not take decimals yet, got ", arg_exprs[i]->ToString(),
                                        " of type ", arg_types[i]->ToString());
      }
    }
    return CommonType(arg_types);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto type, CommonType({args[0].type(), args[1].type()}));
    std::shared_ptr<arrow::DataType> work = arrow::is_floating(type->id())         ? arrow::float64()
                                            : arrow::is_signed_integer(type->id()) ? arrow::int64()
                                                                                   : arrow::uint64();
    if (type->id() == arrow::Type::NA) return arrow::MakeArrayOfNull(type, ctx.num_rows);
    std::shared_ptr<arrow::Array> arrays[2];
    for (int i = 0; i < 2; ++i) {
      ARROW_ASSIGN_OR_RAISE(auto array, ToArray(args[i], ctx.num_rows));
      ARROW_ASSIGN_OR_RAISE(arrays[i], arrow::compute::Cast(*array, work));
    }
    std::shared_ptr<arrow::Array> out;
    switch (work->id()) {
      case arrow::Type::DOUBLE: {
        ARROW_ASSIGN_OR_RAISE(out, Divide<arrow::DoubleType>(*arrays[0], *arrays[1], kind_, ctx));
        break;
      }
      case arrow::Type::INT64: {
        ARROW_ASSIGN_OR_RAISE(out, Divide<arrow::Int64Type>(*arrays[0], *arrays[1], kind_, ctx));
        break;
      }
      default: {
        ARROW_ASSIGN_OR_RAISE(out, Divide<arrow::UInt64Type>(*arrays[0], *arrays[1], kind_, ctx));
        break;
      }
    }
    if (out->type()->Equals(*type)) return out;
    auto cast = arrow::compute::Cast(*out, type);
    if (!cast.ok())
      return RunError(name(), arrow::Status::Invalid("overflow: ", cast.status().message()), ctx);
    return *cast;
  }

 private:
  // The type Arrow's own arithmetic gives the pair (int32 and int64 → int64, int and float → float).
  static arrow::Result<std::shared_ptr<arrow::DataType>> CommonType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types) {
    ARROW_ASSIGN_OR_RAISE(auto empties, EmptyArguments(types));
    ARROW_ASSIGN_OR_RAISE(auto result, arrow::compute::CallFunction("subtract", empties));
    return result.type();
  }

  DivisionKind kind_;
};

}  // namespace

arrow::Status RegisterDivisionFunctions() {
  ARROW_RETURN_NOT_OK(
      FunctionRegistry::Global()->Register(std::make_shared<DivisionFunction>(DivisionKind::kModulo)));
  return FunctionRegistry::Global()->Register(std::make_shared<DivisionFunction>(DivisionKind::kFloorDivide));
}

}  // namespace ketch::math
