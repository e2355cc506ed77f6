// length: Daft's one length for strings (code points), binaries (bytes) and lists (elements),
// always uint64.

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include "ketch/functions/arrow_options_function.h"
#include "ketch/functions/string/string_functions.h"

namespace ketch::str {
namespace {

arrow::Result<std::string> ArrowLength(const arrow::DataType& type) {
  const auto id = type.id();
  if (arrow::is_string(id)) return std::string("utf8_length");
  if (arrow::is_base_binary_like(id) || id == arrow::Type::FIXED_SIZE_BINARY)
    return std::string("binary_length");
  if (arrow::is_list_like(id) && id != arrow::Type::MAP && id != arrow::Type::STRUCT) {
    return std::string("list_value_length");
  }
  return arrow::Status::TypeError("");
}

class LengthFunction : public ScalarFunction {
 public:
  std::string name() const override { return "length"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    if (arg_types.size() != 1) return arrow::Status::Invalid("length takes one argument");
    if (arg_types[0]->id() != arrow::Type::NA && !ArrowLength(*arg_types[0]).ok()) {
      return arrow::Status::TypeError("length expects a string, binary or list, got ",
                                      arg_exprs[0]->ToString(), " of type ", arg_types[0]->ToString());
    }
    return arrow::uint64();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    if (args[0].type()->id() == arrow::Type::NA) return arrow::MakeArrayOfNull(arrow::uint64(), ctx.num_rows);
    ARROW_ASSIGN_OR_RAISE(auto function, ArrowLength(*args[0].type()));
    auto result = arrow::compute::CallFunction(function, {args[0]});
    if (!result.ok()) return RunError(name(), result.status(), ctx);
    return arrow::compute::Cast(*result, arrow::uint64());
  }
};

}  // namespace

arrow::Status RegisterLengthFunction() {
  return FunctionRegistry::Global()->Register(std::make_shared<LengthFunction>());
}

}  // namespace ketch::str
