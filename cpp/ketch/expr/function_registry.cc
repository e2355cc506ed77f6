#include "ketch/expr/function_registry.h"

#include <arrow/compute/api.h>

#include <limits>
#include <set>
#include <sstream>

#include "ketch/expr/date_duration_arithmetic.h"
#include "ketch/expr/key_storage.h"
#include "ketch/expr/nested_compare.h"

namespace ketch {
namespace {

/// Reaches an Arrow compute function through Ketch's ScalarFunction interface. Type resolution runs
/// the kernel on empty arrays of the argument types, which applies Arrow's own dispatch rules
/// (implicit casts included) and costs microseconds.
class ArrowComputeFunction : public ScalarFunction {
 public:
  explicit ArrowComputeFunction(std::string name)
      : name_(std::move(name)), compares_(Comparisons().count(name_) > 0) {}

  std::string name() const override { return name_; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& options) const override {
    if (compares_ && arg_types.size() == 2 && arg_types[0] && arg_types[1] &&
        IsNestedComparison(*arg_types[0], *arg_types[1])) {
      return arrow::boolean();  // lists and structs: nested_compare.h
    }
    if (IsDateDurationArithmetic(name_, arg_types)) return arrow::date32();
    ARROW_ASSIGN_OR_RAISE(auto empties, EmptyArguments(arg_types));
    if (compares_) {
      for (auto& datum : empties) datum = ComparedValue(datum);
    }
    auto result = arrow::compute::CallFunction(name_, empties);
    if (!result.ok()) return CannotApply(name_, arg_types, arg_exprs);
    return result->type();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    if (compares_ && args.size() == 2 && IsNestedComparison(*args[0].type(), *args[1].type())) {
      return CompareNested(name_, args[0], args[1], ctx.num_rows);
    }
    if (args.size() == 2 && IsDateDurationArithmetic(name_, {args[0].type(), args[1].type()})) {
      return DateDurationArithmetic(name_, args, ctx.num_rows);
    }
    std::vector<arrow::Datum> storage_args;
    if (compares_) {
      for (const auto& arg : args) storage_args.push_back(ComparedValue(arg));
    }
    auto result = arrow::compute::CallFunction(name_, compares_ ? storage_args : args);
    if (!result.ok()) {
      // e.g. "multiply_checked failed in the morsel starting at source row 12: overflow"
      const bool has_row = ctx.num_rows > 0 && (!ctx.source_rows || ctx.source_rows->length() > 0);
      if (!has_row) return result.status().WithMessage(name_, " failed: ", result.status().message());
      return result.status().WithMessage(name_, " failed in the morsel starting at source row ",
                                         ctx.SourceRow(0), ": ", result.status().message());
    }
    return result;
  }

 private:
  // Arrow defines no comparison on extension types: those that can be keys compare as their
  // storage (a UUID by its 16 bytes), the same view the sort, group-by and join keys take
  // (key_storage.h). Others (images, Python objects) stay as they are, and Arrow refuses them.
  static arrow::Datum ComparedValue(const arrow::Datum& value) {
    if (!value.type() || !ComparesAsStorage(*value.type())) return value;
    return StorageView(value);
  }

  static const std::set<std::string>& Comparisons() {
    static const std::set<std::string> names = {"equal",      "not_equal", "less",
                                                "less_equal", "greater",   "greater_equal"};
    return names;
  }

  std::string name_;
  bool compares_ = false;
};

}  // namespace

FunctionRegistry* FunctionRegistry::Global() {
  static FunctionRegistry registry;
  return &registry;
}

arrow::Status FunctionRegistry::Register(std::shared_ptr<ScalarFunction> function) {
  std::lock_guard<std::mutex> lock(mutex_);
  functions_[function->name()] = std::move(function);
  return arrow::Status::OK();
}

arrow::Result<std::shared_ptr<ScalarFunction>> FunctionRegistry::Get(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = functions_.find(name);
  if (it != functions_.end()) return it->second;
  if (arrow::compute::GetFunctionRegistry()->GetFunction(name).ok()) {
    auto adapter = std::make_shared<ArrowComputeFunction>(name);
    functions_[name] = adapter;
    return adapter;
  }
  if (name.rfind("agg_", 0) == 0) {
    return arrow::Status::Invalid(name.substr(4), "() is an aggregation: use it in df.agg(...) or ",
                                  "df.groupby(...).agg(...), not in a projection or filter");
  }
  return arrow::Status::KeyError("unknown function '", name, "'");
}

arrow::Result<std::vector<arrow::Datum>> EmptyArguments(
    const std::vector<std::shared_ptr<arrow::DataType>>& types) {
  std::vector<arrow::Datum> empties;
  empties.reserve(types.size());
  for (const auto& type : types) {
    ARROW_ASSIGN_OR_RAISE(auto empty, arrow::MakeEmptyArray(type));
    empties.emplace_back(std::move(empty));
  }
  return empties;
}

arrow::Status CannotApply(const std::string& name,
                          const std::vector<std::shared_ptr<arrow::DataType>>& arg_types,
                          const std::vector<ExprPtr>& arg_exprs, const std::string& detail) {
  std::ostringstream args;
  for (size_t i = 0; i < arg_types.size(); ++i) {
    if (i) args << ", ";
    if (i < arg_exprs.size() && arg_exprs[i]) args << arg_exprs[i]->ToString() << ": ";
    args << arg_types[i]->ToString();
  }
  if (detail.empty()) return arrow::Status::TypeError("cannot apply '", name, "' to (", args.str(), ")");
  return arrow::Status::TypeError("cannot apply '", name, "' to (", args.str(), "): ", detail);
}

bool HasOption(const FunctionOptions& options, const std::string& key) {
  auto it = options.find(key);
  return it != options.end() && it->second && it->second->is_valid;
}

arrow::Result<std::string> GetStringOption(const FunctionOptions& options, const std::string& key,
                                           const std::string& function) {
  auto it = options.find(key);
  if (it == options.end() || !it->second || !it->second->is_valid) {
    return arrow::Status::Invalid(function, ": missing option '", key, "'");
  }
  if (!arrow::is_string(it->second->type->id())) {
    return arrow::Status::TypeError(function, ": option '", key, "' must be a string, got ",
                                    it->second->type->ToString());
  }
  return std::string(static_cast<const arrow::BaseBinaryScalar&>(*it->second).view());
}

arrow::Result<int64_t> GetIntOption(const FunctionOptions& options, const std::string& key,
                                    const std::string& function) {
  auto it = options.find(key);
  if (it == options.end() || !it->second || !it->second->is_valid) {
    return arrow::Status::Invalid(function, ": missing option '", key, "'");
  }
  ARROW_ASSIGN_OR_RAISE(auto cast, it->second->CastTo(arrow::int64()));
  return static_cast<const arrow::Int64Scalar&>(*cast).value;
}

arrow::Result<std::shared_ptr<arrow::Array>> ToArray(const arrow::Datum& datum, int64_t num_rows) {
  if (datum.is_array()) return datum.make_array();
  // Zero rows: an empty array of the type (Arrow's list-scalar repeat and Concatenate refuse zero
  // pieces: "Must pass at least one array").
  if (datum.is_scalar()) {
    if (num_rows == 0) return arrow::MakeEmptyArray(datum.scalar()->type);
    return arrow::MakeArrayFromScalar(*datum.scalar(), num_rows);
  }
  if (datum.is_chunked_array()) {
    if (datum.chunked_array()->num_chunks() == 0) return arrow::MakeEmptyArray(datum.type());
    return arrow::Concatenate(datum.chunked_array()->chunks());
  }
  return arrow::Status::Invalid("expected an array, got ", datum.ToString());
}

}  // namespace ketch
