#include "ketch/functions/arrow_options_function.h"

namespace ketch {
namespace {

const char* KindName(ArgKind kind) {
  switch (kind) {
    case ArgKind::kAny:
      return "any value";
    case ArgKind::kString:
      return "a string";
    case ArgKind::kNumeric:
      return "a number";
    case ArgKind::kInteger:
      return "an integer";
    case ArgKind::kFloating:
      return "a float";
    case ArgKind::kStruct:
      return "a struct";
    case ArgKind::kList:
      return "a list";
  }
  return "?";
}

bool Fits(ArgKind kind, const arrow::DataType& type) {
  const auto id = type.id();
  if (id == arrow::Type::NA) return true;  // an all-null column fits every function
  switch (kind) {
    case ArgKind::kAny:
      return true;
    case ArgKind::kString:
      return arrow::is_string(id) || id == arrow::Type::STRING_VIEW;
    case ArgKind::kNumeric:
      return arrow::is_integer(id) || arrow::is_floating(id) || arrow::is_decimal(id);
    case ArgKind::kInteger:
      return arrow::is_integer(id);
    case ArgKind::kFloating:
      return arrow::is_floating(id);
    case ArgKind::kStruct:
      return id == arrow::Type::STRUCT;
    case ArgKind::kList:
      return arrow::is_list_like(id);
  }
  return false;
}

class ArrowOptionsFunction : public ScalarFunction {
 public:
  explicit ArrowOptionsFunction(ArrowOptionsSpec spec) : spec_(std::move(spec)) {}

  std::string name() const override { return spec_.name; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& options) const override {
    if (arg_types.empty()) return arrow::Status::Invalid(spec_.name, " needs an argument");
    ARROW_RETURN_NOT_OK(CheckArgKind(spec_.first_arg, spec_.name, arg_types[0], *arg_exprs[0]));
    ARROW_ASSIGN_OR_RAISE(auto probe, EmptyArguments(arg_types));
    auto result = Run(probe, options);
    if (!result.ok()) {
      if (result.status().IsInvalid() && result.status().message().rfind(spec_.name, 0) == 0) {
        return result.status();  // our own option errors already name the function
      }
      if (!spec_.pattern_option.empty() && result.status().IsInvalid()) {
        ARROW_ASSIGN_OR_RAISE(auto pattern, StringOption(options, spec_.pattern_option, "", spec_.name));
        return arrow::Status::Invalid(spec_.name, ": invalid regular expression '", pattern,
                                      "': ", result.status().message());
      }
      return CannotApply(spec_.name, arg_types, arg_exprs, result.status().message());
    }
    if (!spec_.pattern_option.empty() && arg_types.size() == 1 && Fits(ArgKind::kString, *arg_types[0]) &&
        arg_types[0]->id() != arrow::Type::NA) {
      // Regexes compile when a kernel first sees a value: probe one empty string.
      ARROW_ASSIGN_OR_RAISE(auto one, arrow::MakeArrayFromScalar(arrow::StringScalar(""), 1));
      ARROW_ASSIGN_OR_RAISE(auto typed, arrow::compute::Cast(one, arg_types[0]));
      auto probed = Run({arrow::Datum(typed)}, options);
      if (!probed.ok()) {
        ARROW_ASSIGN_OR_RAISE(auto pattern, StringOption(options, spec_.pattern_option, "", spec_.name));
        return arrow::Status::Invalid(spec_.name, ": invalid regular expression '", pattern,
                                      "': ", probed.status().message());
      }
    }
    return result->type();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    auto result = Run(args, options);
    if (!result.ok()) return RunError(spec_.name, result.status(), ctx);
    return result;
  }

 private:
  arrow::Result<arrow::Datum> Run(const std::vector<arrow::Datum>& args,
                                  const FunctionOptions& options) const {
    std::vector<arrow::Datum> current = args;
    arrow::Datum out;
    for (const auto& step : spec_.steps) {
      std::shared_ptr<arrow::compute::FunctionOptions> arrow_options;
      if (step.make_options) {
        ARROW_ASSIGN_OR_RAISE(arrow_options, step.make_options(options, spec_.name));
      }
      ARROW_ASSIGN_OR_RAISE(out,
                            arrow::compute::CallFunction(step.arrow_function, current, arrow_options.get()));
      current = {out};
    }
    if (spec_.result_type && !out.type()->Equals(*spec_.result_type)) {
      ARROW_ASSIGN_OR_RAISE(out, arrow::compute::Cast(out, spec_.result_type));
    }
    return out;
  }

  ArrowOptionsSpec spec_;
};

}  // namespace

arrow::Status CheckArgKind(ArgKind kind, const std::string& function,
                           const std::shared_ptr<arrow::DataType>& type, const Expr& expr) {
  if (Fits(kind, *type)) return arrow::Status::OK();
  return arrow::Status::TypeError(function, " expects ", KindName(kind), ", got ", expr.ToString(),
                                  " of type ", type->ToString());
}

arrow::Status RegisterArrowOptionsFunction(ArrowOptionsSpec spec) {
  return FunctionRegistry::Global()->Register(std::make_shared<ArrowOptionsFunction>(std::move(spec)));
}

arrow::Result<bool> BoolOption(const FunctionOptions& options, const std::string& key, bool fallback,
                               const std::string& function) {
  if (!HasOption(options, key)) return fallback;
  const auto& scalar = options.at(key);
  if (scalar->type->id() != arrow::Type::BOOL) {
    return arrow::Status::Invalid(function, ": option '", key, "' must be a bool, got ", scalar->ToString());
  }
  return static_cast<const arrow::BooleanScalar&>(*scalar).value;
}

arrow::Result<int64_t> IntOption(const FunctionOptions& options, const std::string& key, int64_t fallback,
                                 const std::string& function) {
  if (!HasOption(options, key)) return fallback;
  const auto& scalar = options.at(key);
  if (!arrow::is_integer(scalar->type->id())) {
    return arrow::Status::Invalid(function, ": option '", key, "' must be an int, got ", scalar->ToString());
  }
  return GetIntOption(options, key, function);
}

arrow::Result<std::string> StringOption(const FunctionOptions& options, const std::string& key,
                                        const std::string& fallback, const std::string& function) {
  if (!HasOption(options, key)) return fallback;
  return GetStringOption(options, key, function);
}

arrow::Status RunError(const std::string& function, const arrow::Status& cause, const EvalContext& ctx) {
  const bool has_row = ctx.num_rows > 0 && (!ctx.source_rows || ctx.source_rows->length() > 0);
  if (!has_row) return cause.WithMessage(function, " failed: ", cause.message());
  return cause.WithMessage(function, " failed in the morsel starting at source row ", ctx.SourceRow(0), ": ",
                           cause.message());
}

}  // namespace ketch
