// list_map(list, body) and list_filter(list, predicate): Daft's lambda list functions. The body is
// an ordinary expression over `element()` (col("")); it is evaluated once per morsel on the list
// column's values (all rows' elements in one array, ToListRows' dense layout) and the result is
// cut back into rows by the same offsets, so a mapper costs one vectorized kernel call, not one
// per list.

#include <arrow/compute/api.h>

#include <set>
#include <string>

#include "ketch/expr/lambda_call.h"
#include "ketch/functions/nested/list_rows.h"
#include "ketch/functions/nested/nested_function_base.h"
#include "ketch/functions/nested/nested_functions.h"

namespace ketch::nested {
namespace {

// The one-column schema a body is resolved and evaluated over: element() is the list's values.
std::shared_ptr<arrow::Schema> ElementSchema(const arrow::DataType& list_type) {
  return arrow::schema({arrow::field(kElementColumn, ValueField(list_type)->type())});
}

class ListLambdaFunction : public LambdaFunction {
 public:
  explicit ListLambdaFunction(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions& /*options*/) const override {
    ARROW_RETURN_NOT_OK(ExpectArgumentCount(name_, 2, arg_types));
    ARROW_RETURN_NOT_OK(ExpectListArgument(name_, 0, arg_types, arg_exprs));
    ARROW_ASSIGN_OR_RAISE(auto body_type, ResolveBody(*arg_types[0], *arg_exprs[1]));
    const auto value_field = ValueField(*arg_types[0]);
    if (name_ == "list_filter") {
      if (body_type->id() != arrow::Type::BOOL && body_type->id() != arrow::Type::NA) {
        return arrow::Status::TypeError("list_filter expects a boolean predicate over element(), but ",
                                        arg_exprs[1]->ToString(), " has type ", body_type->ToString());
      }
      return VariableListOf(*arg_types[0], value_field);
    }
    return VariableListOf(*arg_types[0], arrow::field(value_field->name(), body_type));
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& /*args*/,
                                      const FunctionOptions& /*options*/,
                                      const EvalContext& /*ctx*/) const override {
    return arrow::Status::Invalid(name_, " needs its body expression (a lambda call)");
  }

  arrow::Result<arrow::Datum> ExecuteLambda(const std::vector<arrow::Datum>& args,
                                            const std::vector<ExprPtr>& arg_exprs,
                                            const FunctionOptions& /*options*/,
                                            const EvalContext& ctx) const override {
    if (args.size() != 1 || arg_exprs.size() != 2) {
      return arrow::Status::Invalid(name_, " takes a list and one body expression");
    }
    ARROW_ASSIGN_OR_RAISE(auto list, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto rows, ToListRows(list));
    const auto schema = ElementSchema(*list->type());
    auto elements = arrow::RecordBatch::Make(schema, rows.values->length(), {rows.values});
    EvalContext element_ctx;
    element_ctx.num_rows = rows.values->length();
    element_ctx.cancelled = ctx.cancelled;
    element_ctx.memory_budget_bytes = ctx.memory_budget_bytes;
    auto evaluated = Evaluate(*arg_exprs[1], *elements, element_ctx);
    if (!evaluated.ok()) {
      return evaluated.status().WithMessage(
          name_, " failed on the elements of the lists in the morsel starting at source row ",
          ctx.SourceRow(0), ": ", evaluated.status().message());
    }
    auto body = *std::move(evaluated);
    const auto value_field = ValueField(*list->type());
    if (name_ == "list_map") {
      auto type = VariableListOf(*list->type(), arrow::field(value_field->name(), body->type()));
      return MakeListArray(type, rows.offsets, rows.valid, std::move(body));
    }
    // list_filter: keep the elements whose predicate is true (false and null drop them).
    if (body->type_id() == arrow::Type::NA) {
      ARROW_ASSIGN_OR_RAISE(body, arrow::MakeArrayFromScalar(arrow::BooleanScalar(false), body->length()));
    }
    const auto& keep = static_cast<const arrow::BooleanArray&>(*body);
    std::vector<int64_t> offsets(rows.length + 1, 0);
    for (int64_t i = 0; i < rows.length; ++i) {
      int64_t kept = 0;
      for (int64_t k = rows.offsets[i]; k < rows.offsets[i + 1]; ++k) {
        kept += keep.IsValid(k) && keep.Value(k) ? 1 : 0;
      }
      offsets[i + 1] = offsets[i] + kept;
    }
    ARROW_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(rows.values, body));
    auto type = VariableListOf(*list->type(), value_field);
    return MakeListArray(type, offsets, rows.valid, filtered.make_array());
  }

 private:
  // The body's type over element(); it may read nothing but element() and call no UDF.
  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveBody(const arrow::DataType& list_type,
                                                              const Expr& body) const {
    if (body.HasUdf()) {
      return arrow::Status::NotImplemented(name_, ": the body ", body.ToString(),
                                           " calls a UDF; apply the UDF to the exploded list instead");
    }
    std::set<std::string> columns;
    body.CollectColumns(&columns);
    for (const auto& column : columns) {
      if (column != kElementColumn) {
        return arrow::Status::Invalid(name_, ": the body ", body.ToString(), " reads column '", column,
                                      "'; inside ", name_,
                                      " only element() (the list's element) can be read");
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto field, ResolveField(body, *ElementSchema(list_type)));
    return field->type();
  }

  std::string name_;
};

}  // namespace

arrow::Status RegisterListLambdaFunctions() {
  ARROW_RETURN_NOT_OK(FunctionRegistry::Global()->Register(std::make_shared<ListLambdaFunction>("list_map")));
  return FunctionRegistry::Global()->Register(std::make_shared<ListLambdaFunction>("list_filter"));
}

}  // namespace ketch::nested
