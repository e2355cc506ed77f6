// find(substr): Arrow's find_substring answers in bytes; Daft (and Python's str.find) answer in
// characters, so this counts the code points before the first match.

#include <arrow/api.h>

#include <string_view>

#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/string/string_functions.h"

namespace ketch::str {
namespace {

int64_t CodePoints(std::string_view bytes) {
  int64_t n = 0;
  for (unsigned char c : bytes) n += (c & 0xC0) != 0x80;
  return n;
}

template <typename ArrayType>
arrow::Result<std::shared_ptr<arrow::Array>> FindAll(const arrow::Array& input, std::string_view needle) {
  const auto& strings = static_cast<const ArrayType&>(input);
  arrow::Int64Builder builder;
  ARROW_RETURN_NOT_OK(builder.Reserve(strings.length()));
  for (int64_t i = 0; i < strings.length(); ++i) {
    if (strings.IsNull(i)) {
      builder.UnsafeAppendNull();
      continue;
    }
    const std::string_view value = strings.GetView(i);
    const size_t at = value.find(needle);
    builder.UnsafeAppend(at == std::string_view::npos ? -1 : CodePoints(value.substr(0, at)));
  }
  return builder.Finish();
}

class FindFunction : public ScalarFunction {
 public:
  std::string name() const override { return "find"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& options) const override {
    if (arg_types.size() != 1) return arrow::Status::Invalid("find takes one string argument");
    ARROW_RETURN_NOT_OK(CheckArgKind(ArgKind::kString, name(), arg_types[0], *arg_exprs[0]));
    ARROW_RETURN_NOT_OK(GetStringOption(options, "substr", name()).status());
    return arrow::int64();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto needle, GetStringOption(options, "substr", name()));
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    switch (input->type_id()) {
      case arrow::Type::STRING:
        return FindAll<arrow::StringArray>(*input, needle);
      case arrow::Type::LARGE_STRING:
        return FindAll<arrow::LargeStringArray>(*input, needle);
      case arrow::Type::NA:
        return arrow::MakeArrayOfNull(arrow::int64(), input->length());
      default: {
        ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(*input, arrow::large_utf8()));
        return FindAll<arrow::LargeStringArray>(*cast, needle);
      }
    }
  }
};

}  // namespace

arrow::Status RegisterFindFunction() {
  return FunctionRegistry::Global()->Register(std::make_shared<FindFunction>());
}

}  // namespace ketch::str
