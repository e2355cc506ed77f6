#include "ketch/functions/per_row_option.h"

#include <arrow/compute/api.h>

#include <string>
#include <string_view>
#include <vector>

#include "ketch/expr/function_registry.h"
#include "ketch/functions/per_row_kernel.h"

namespace ketch {
namespace {

constexpr char kName[] = "per_row_option";

// A value as the option scalar the wrapped function reads: strings as utf8, integers as int64.
arrow::Result<std::shared_ptr<arrow::Scalar>> AsOption(const arrow::Scalar& value) {
  if (!value.is_valid) return arrow::MakeNullScalar(arrow::utf8());
  if (arrow::is_base_binary_like(value.type->id())) {
    return std::make_shared<arrow::StringScalar>(
        std::string(static_cast<const arrow::BaseBinaryScalar&>(value).view()));
  }
  return value.CastTo(arrow::int64());
}

// A stand-in option of the values' type for plan-time type resolution: a valid substring and a
// valid regex with 9 groups (regexp_extract checks its group index against the pattern); 1 a valid
// count.
std::shared_ptr<arrow::Scalar> Placeholder(const arrow::DataType& values_type) {
  if (arrow::is_base_binary_like(values_type.id())) {
    return std::make_shared<arrow::StringScalar>("(((((((((a)))))))))");
  }
  return std::make_shared<arrow::Int64Scalar>(1);
}

// contains / startswith / endswith with a pattern per row: one pass over both string columns,
// no grouping (grouping costs a kernel call per distinct pattern: 70 us each, so a column of
// distinct patterns took 15 s per 200k rows; this loop takes milliseconds).
bool IsPlainMatch(const std::string& function) {
  return function == "utf8_contains" || function == "starts_with" || function == "ends_with";
}

arrow::Result<std::shared_ptr<arrow::Array>> MatchRows(const std::string& function,
                                                       const std::shared_ptr<arrow::Array>& input,
                                                       const std::shared_ptr<arrow::Array>& patterns) {
  ARROW_ASSIGN_OR_RAISE(auto text_array, arrow::compute::Cast(*input, arrow::large_utf8()));
  ARROW_ASSIGN_OR_RAISE(auto pattern_array, arrow::compute::Cast(*patterns, arrow::large_utf8()));
  const auto& text = static_cast<const arrow::LargeStringArray&>(*text_array);
  const auto& pattern = static_cast<const arrow::LargeStringArray&>(*pattern_array);
  arrow::BooleanBuilder out;
  ARROW_RETURN_NOT_OK(out.Reserve(text.length()));
  for (int64_t i = 0; i < text.length(); ++i) {
    if (text.IsNull(i) || pattern.IsNull(i)) {
      out.UnsafeAppendNull();
      continue;
    }
    const std::string_view t = text.GetView(i), p = pattern.GetView(i);
    bool hit;
    if (function == "starts_with") {
      hit = t.substr(0, p.size()) == p;
    } else if (function == "ends_with") {
      hit = t.size() >= p.size() && t.substr(t.size() - p.size()) == p;
    } else {
      hit = t.find(p) != std::string_view::npos;
    }
    out.UnsafeAppend(hit);
  }
  return out.Finish();
}

class PerRowOptionFunction : public ScalarFunction {
 public:
  std::string name() const override { return kName; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& options) const override {
    if (arg_types.size() != 2) {
      return arrow::Status::Invalid(kName, " takes an input and a column of option values, got ",
                                    arg_types.size(), " arguments");
    }
    ARROW_ASSIGN_OR_RAISE(auto target, FindTarget(options));
    const auto& values_type = *arg_types[1];
    if (!arrow::is_base_binary_like(values_type.id()) && !arrow::is_integer(values_type.id()) &&
        values_type.id() != arrow::Type::NA) {
      return arrow::Status::TypeError(target.label, ": the ", target.argument,
                                      " argument expects a string or integer column, but ",
                                      arg_exprs[1]->ToString(), " has type ", values_type.ToString());
    }
    auto inner_options = InnerOptions(options, target, Placeholder(values_type));
    return target.impl->ResolveType({arg_types[0]}, {arg_exprs[0]}, inner_options);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto target, FindTarget(options));
    const int64_t n = ctx.num_rows;
    if (args[1].is_scalar()) {  // one value for all rows: a plain call
      ARROW_ASSIGN_OR_RAISE(auto value, AsOption(*args[1].scalar()));
      if (value->is_valid) return Call(target, options, args[0], value, ctx);
    }
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], n));
    ARROW_ASSIGN_OR_RAISE(auto values, ToArray(args[1], n));
    const auto values_id = values->type_id();
    const auto* one_pass = dynamic_cast<const PerRowOptionKernel*>(target.impl.get());
    if (one_pass && one_pass->TakesPerRow(target.option) &&
        (arrow::is_string(values_id) || values_id == arrow::Type::STRING_VIEW ||
         values_id == arrow::Type::NA)) {
      auto inner = InnerOptions(options, target, nullptr);  // a kernel of its own: one pass, no grouping
      inner.erase(target.option);
      return one_pass->ExecutePerRow(input, target.option, values, inner, {target.label, target.argument},
                                     ctx);
    }
    const bool all_text = arrow::is_string(input->type_id()) && arrow::is_string(values->type_id());
    if (all_text && IsPlainMatch(target.function) && InnerOptions(options, target, nullptr).size() == 1) {
      return MatchRows(target.function, input, values);
    }
    // Group the rows by value: dictionary codes, then each code's row indices in order.
    ARROW_ASSIGN_OR_RAISE(auto encoded, arrow::compute::CallFunction("dictionary_encode", {values}));
    const auto encoded_array = encoded.make_array();
    const auto& dict = static_cast<const arrow::DictionaryArray&>(*encoded_array);
    ARROW_ASSIGN_OR_RAISE(auto codes, arrow::compute::Cast(*dict.indices(), arrow::int64()));
    const auto& code = static_cast<const arrow::Int64Array&>(*codes);
    const int64_t groups = dict.dictionary()->length();
    std::vector<std::vector<int64_t>> rows_of(groups + 1);  // the last one: null values
    for (int64_t i = 0; i < n; ++i) rows_of[code.IsValid(i) ? code.Value(i) : groups].push_back(i);

    arrow::ArrayVector pieces;
    std::vector<int64_t> position(n);
    int64_t placed = 0;
    std::shared_ptr<arrow::DataType> out_type;
    for (int64_t g = 0; g <= groups; ++g) {
      const auto& rows = rows_of[g];
      if (rows.empty()) continue;
      for (size_t k = 0; k < rows.size(); ++k) position[rows[k]] = placed + static_cast<int64_t>(k);
      placed += static_cast<int64_t>(rows.size());
      if (g == groups) continue;  // nulls: filled in below, once the result type is known
      arrow::Int64Builder builder;
      ARROW_RETURN_NOT_OK(builder.AppendValues(rows));
      ARROW_ASSIGN_OR_RAISE(auto indices, builder.Finish());
      ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(input, indices));
      ARROW_ASSIGN_OR_RAISE(auto scalar, dict.dictionary()->GetScalar(g));
      ARROW_ASSIGN_OR_RAISE(auto value, AsOption(*scalar));
      EvalContext group_ctx = ctx;
      group_ctx.num_rows = static_cast<int64_t>(rows.size());
      group_ctx.source_rows = nullptr;
      group_ctx.row_offset = ctx.SourceRow(rows[0]);
      ARROW_ASSIGN_OR_RAISE(auto result, Call(target, options, taken, value, group_ctx));
      ARROW_ASSIGN_OR_RAISE(auto piece, ToArray(result, group_ctx.num_rows));
      out_type = piece->type();
      pieces.push_back(std::move(piece));
    }
    if (!rows_of[groups].empty()) {
      if (!out_type) {
        auto column = Expr::Column("input");
        ARROW_ASSIGN_OR_RAISE(
            out_type, target.impl->ResolveType({input->type()}, {column},
                                               InnerOptions(options, target, Placeholder(*values->type()))));
      }
      ARROW_ASSIGN_OR_RAISE(auto nulls,
                            arrow::MakeArrayOfNull(out_type, static_cast<int64_t>(rows_of[groups].size())));
      pieces.push_back(std::move(nulls));
    }
    if (pieces.empty()) {
      auto column = Expr::Column("input");
      ARROW_ASSIGN_OR_RAISE(
          out_type, target.impl->ResolveType({input->type()}, {column},
                                             InnerOptions(options, target, Placeholder(*values->type()))));
      ARROW_ASSIGN_OR_RAISE(auto empty, arrow::MakeEmptyArray(out_type));
      return arrow::Datum(std::move(empty));
    }
    ARROW_ASSIGN_OR_RAISE(auto grouped, arrow::Concatenate(pieces));
    arrow::Int64Builder order;
    ARROW_RETURN_NOT_OK(order.AppendValues(position));
    ARROW_ASSIGN_OR_RAISE(auto order_array, order.Finish());
    return arrow::compute::Take(grouped, order_array);
  }

 private:
  struct Target {
    std::string function;  // the wrapped function (utf8_contains)
    std::string option;    // its option the values fill (pattern)
    std::string label;     // the user's function name for errors (contains); default: function
    std::string argument;  // the user's argument name for errors (substr); default: option
    std::shared_ptr<ScalarFunction> impl;
  };

  static bool IsOwnOption(const std::string& key) {
    return key == "function" || key == "option" || key == "label" || key == "argument";
  }

  static arrow::Result<Target> FindTarget(const FunctionOptions& options) {
    Target target;
    ARROW_ASSIGN_OR_RAISE(target.function, GetStringOption(options, "function", kName));
    ARROW_ASSIGN_OR_RAISE(target.option, GetStringOption(options, "option", kName));
    target.label = HasOption(options, "label")
                       ? GetStringOption(options, "label", kName).ValueOr(target.function)
                       : target.function;
    target.argument = HasOption(options, "argument")
                          ? GetStringOption(options, "argument", kName).ValueOr(target.option)
                          : target.option;
    ARROW_ASSIGN_OR_RAISE(target.impl, FunctionRegistry::Global()->Get(target.function));
    return target;
  }

  // The wrapped function's options: this call's, less function/option, with option = value.
  static FunctionOptions InnerOptions(const FunctionOptions& options, const Target& target,
                                      std::shared_ptr<arrow::Scalar> value) {
    FunctionOptions inner;
    for (const auto& [key, scalar] : options) {
      if (!IsOwnOption(key)) inner[key] = scalar;
    }
    inner[target.option] = std::move(value);
    return inner;
  }

  static arrow::Result<arrow::Datum> Call(const Target& target, const FunctionOptions& options,
                                          const arrow::Datum& input, std::shared_ptr<arrow::Scalar> value,
                                          const EvalContext& ctx) {
    const std::string shown = value->ToString();
    auto result = target.impl->Execute({input}, InnerOptions(options, target, std::move(value)), ctx);
    if (!result.ok()) {
      return result.status().WithMessage(target.label, " with ", target.argument, " '", shown,
                                         "' (a per-row value): ", result.status().message());
    }
    return result;
  }
};

}  // namespace

arrow::Status RegisterPerRowOptionFunction() {
  return FunctionRegistry::Global()->Register(std::make_shared<PerRowOptionFunction>());
}

}  // namespace ketch
