#include "ketch/functions/math/math_functions.h"

#include <arrow/compute/api.h>

#include <functional>

#include "ketch/expr/date_duration_arithmetic.h"
#include "ketch/expr/float_text_cast.h"
#include "ketch/functions/arrow_options_function.h"

namespace ketch::math {

arrow::Status RegisterDivisionFunctions();
arrow::Status RegisterHashFunction();
arrow::Status RegisterMinHashFunction();
arrow::Status RegisterSimHashFunction();
arrow::Status RegisterHammingDistanceFunction();
arrow::Status RegisterGreatCircleDistanceFunction();

namespace {

namespace cp = arrow::compute;
using OptionsPtr = arrow::Result<std::shared_ptr<cp::FunctionOptions>>;
using TypeList = std::vector<std::shared_ptr<arrow::DataType>>;

bool AllBinaryLike(const TypeList& types) {
  for (const auto& t : types) {
    if (!arrow::is_base_binary_like(t->id())) return false;
  }
  return !types.empty();
}

/// `+` concatenates: every argument is binary-like, or one is a string and the others are
/// strings, numbers or booleans (written as text first, Daft's `"user_" + col("id")`).
bool ConcatenatesAsText(const TypeList& types) {
  if (AllBinaryLike(types)) return true;
  bool any_string = false;
  for (const auto& t : types) {
    if (arrow::is_string(t->id())) {
      any_string = true;
    } else if (!arrow::is_integer(t->id()) && !arrow::is_floating(t->id()) && t->id() != arrow::Type::BOOL) {
      return false;
    }
  }
  return any_string;
}

bool AllIntegers(const TypeList& types) {
  for (const auto& t : types) {
    if (!arrow::is_integer(t->id())) return false;
  }
  return !types.empty();
}

/// Keeps an Arrow function's name and meaning, and sends argument types it does not take (strings
/// for `+`, integers for `& | ^ ~`) to another Arrow function.
class DispatchFunction : public ScalarFunction {
 public:
  DispatchFunction(std::string name, std::function<bool(const TypeList&)> predicate, std::string alternative,
                   bool join_strings)
      : name_(std::move(name)),
        predicate_(std::move(predicate)),
        alternative_(std::move(alternative)),
        join_strings_(join_strings) {}

  std::string name() const override { return name_; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeList& arg_types,
                                                              const std::vector<ExprPtr>& arg_exprs,
                                                              const FunctionOptions&) const override {
    ARROW_ASSIGN_OR_RAISE(auto empties, EmptyArguments(arg_types));
    auto result = Call(empties);
    if (!result.ok()) return CannotApply(name_, arg_types, arg_exprs);
    return result->type();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    auto result = Call(args);
    if (!result.ok()) return RunError(name_, result.status(), ctx);
    return result;
  }

 private:
  arrow::Result<arrow::Datum> Call(std::vector<arrow::Datum> args) const {
    TypeList types;
    for (const auto& a : args) types.push_back(a.type());
    if (IsDateDurationArithmetic(name_, types)) {
      int64_t rows = 1;
      for (const auto& a : args) {
        if (a.is_array()) rows = a.length();
      }
      return DateDurationArithmetic(name_, args, rows);  // a date, as in Daft
    }
    if (!predicate_(types)) return cp::CallFunction(name_, args);
    if (!join_strings_) return cp::CallFunction(alternative_, args);
    // Concatenation: binary_join_element_wise wants one string type and the separator last.
    bool same = true;
    for (const auto& t : types) same = same && t->Equals(*types[0]);
    auto type = same ? types[0] : arrow::large_utf8();
    for (auto& a : args) {
      if (a.type()->Equals(*type)) continue;
      if (IsFloatTextCast(*a.type(), *type)) {
        ARROW_ASSIGN_OR_RAISE(a, CastFloatToText(a, type));  // Daft's "2.0", not Arrow's "2"
      } else {
        ARROW_ASSIGN_OR_RAISE(a, cp::Cast(a, type));
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto separator, arrow::MakeScalar(type, std::string()));
    args.emplace_back(separator);
    return cp::CallFunction(alternative_, args);
  }

  std::string name_;
  std::function<bool(const TypeList&)> predicate_;
  std::string alternative_;
  bool join_strings_;
};

/// try_cast: a cast that yields null where a value does not convert.
class TryCastFunction : public ScalarFunction {
 public:
  std::string name() const override { return "try_cast"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeList& arg_types,
                                                              const std::vector<ExprPtr>& arg_exprs,
                                                              const FunctionOptions& options) const override {
    ARROW_ASSIGN_OR_RAISE(auto target, Target(options));
    if (!arg_types[0]->Equals(*target) && !cp::CanCast(*arg_types[0], *target)) {
      return arrow::Status::TypeError("try_cast: cannot cast ", arg_exprs[0]->ToString(), " of type ",
                                      arg_types[0]->ToString(), " to ", target->ToString());
    }
    return target;
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto target, Target(options));
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    auto whole = cp::Cast(*input, target);
    if (whole.ok()) return *whole;
    // Some value does not convert: cast row by row and keep nulls for the failures.
    std::unique_ptr<arrow::ArrayBuilder> builder;
    ARROW_ASSIGN_OR_RAISE(builder, arrow::MakeBuilder(target));
    for (int64_t i = 0; i < input->length(); ++i) {
      auto one = cp::Cast(*input->Slice(i, 1), target);
      if (one.ok()) {
        ARROW_RETURN_NOT_OK(builder->AppendArraySlice(*(*one)->data(), 0, 1));
      } else {
        ARROW_RETURN_NOT_OK(builder->AppendNull());
      }
    }
    return builder->Finish();
  }

 private:
  static arrow::Result<std::shared_ptr<arrow::DataType>> Target(const FunctionOptions& options) {
    auto it = options.find("dtype");
    if (it == options.end() || !it->second) return arrow::Status::Invalid("try_cast: missing option 'dtype'");
    return it->second->type;
  }
};

/// list_getitem: element `index` of each list (negative: from the end), null when out of range.
class ListGetItemFunction : public ScalarFunction {
 public:
  std::string name() const override { return "list_getitem"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeList& arg_types,
                                                              const std::vector<ExprPtr>& arg_exprs,
                                                              const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(CheckArgKind(ArgKind::kList, name(), arg_types[0], *arg_exprs[0]));
    ARROW_RETURN_NOT_OK(GetIntOption(options, "index", name()).status());
    if (arg_types[0]->id() == arrow::Type::NA) return arg_types[0];
    return arg_types[0]->field(0)->type();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto index, GetIntOption(options, "index", name()));
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    if (input->type_id() == arrow::Type::NA) return input;
    arrow::Int64Builder take;
    ARROW_RETURN_NOT_OK(take.Reserve(input->length()));
    std::shared_ptr<arrow::Array> values;
    auto fill = [&](const auto& lists) {
      values = lists.values();
      for (int64_t i = 0; i < lists.length(); ++i) {
        const int64_t length = lists.IsNull(i) ? 0 : lists.value_length(i);
        const int64_t at = index >= 0 ? index : length + index;
        if (lists.IsNull(i) || at < 0 || at >= length) {
          take.UnsafeAppendNull();
        } else {
          take.UnsafeAppend(static_cast<int64_t>(lists.value_offset(i)) + at);
        }
      }
    };
    switch (input->type_id()) {
      case arrow::Type::LIST:
        fill(static_cast<const arrow::ListArray&>(*input));
        break;
      case arrow::Type::LARGE_LIST:
        fill(static_cast<const arrow::LargeListArray&>(*input));
        break;
      case arrow::Type::FIXED_SIZE_LIST:
        fill(static_cast<const arrow::FixedSizeListArray&>(*input));
        break;
      default:
        return arrow::Status::TypeError("list_getitem: unsupported list type ", input->type()->ToString());
    }
    ARROW_ASSIGN_OR_RAISE(auto indices, take.Finish());
    return cp::Take(values, indices);
  }
};

OptionsPtr RoundOptions(const FunctionOptions& options, const std::string& function) {
  ARROW_ASSIGN_OR_RAISE(auto decimals, IntOption(options, "decimals", 0, function));
  return std::make_shared<cp::RoundOptions>(decimals, cp::RoundMode::HALF_TOWARDS_INFINITY);
}

OptionsPtr KeepNulls(const FunctionOptions&, const std::string&) {
  return std::make_shared<cp::ElementWiseAggregateOptions>(/*skip_nulls=*/false);
}

ArrowOptionsSpec Numeric(std::string name, std::string arrow_function, OptionsMaker make_options) {
  ArrowOptionsSpec spec;
  spec.name = std::move(name);
  spec.first_arg = ArgKind::kNumeric;
  spec.steps = {{std::move(arrow_function), std::move(make_options)}};
  return spec;
}

}  // namespace

arrow::Status RegisterMathFunctions() {
  auto* registry = FunctionRegistry::Global();
  ARROW_RETURN_NOT_OK(RegisterArrowOptionsFunction(Numeric("round", "round", RoundOptions)));
  ARROW_RETURN_NOT_OK(RegisterArrowOptionsFunction(Numeric("clip_lower", "max_element_wise", KeepNulls)));
  ARROW_RETURN_NOT_OK(RegisterArrowOptionsFunction(Numeric("clip_upper", "min_element_wise", KeepNulls)));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<DispatchFunction>(
      "add_checked", ConcatenatesAsText, "binary_join_element_wise", true)));
  ARROW_RETURN_NOT_OK(registry->Register(
      std::make_shared<DispatchFunction>("and_kleene", AllIntegers, "bit_wise_and", false)));
  ARROW_RETURN_NOT_OK(
      registry->Register(std::make_shared<DispatchFunction>("or_kleene", AllIntegers, "bit_wise_or", false)));
  ARROW_RETURN_NOT_OK(
      registry->Register(std::make_shared<DispatchFunction>("xor", AllIntegers, "bit_wise_xor", false)));
  ARROW_RETURN_NOT_OK(
      registry->Register(std::make_shared<DispatchFunction>("invert", AllIntegers, "bit_wise_not", false)));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<TryCastFunction>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ListGetItemFunction>()));
  ARROW_RETURN_NOT_OK(RegisterDivisionFunctions());
  ARROW_RETURN_NOT_OK(RegisterMinHashFunction());
  ARROW_RETURN_NOT_OK(RegisterSimHashFunction());
  ARROW_RETURN_NOT_OK(RegisterHammingDistanceFunction());
  ARROW_RETURN_NOT_OK(RegisterGreatCircleDistanceFunction());
  return RegisterHashFunction();
}

}  // namespace ketch::math
