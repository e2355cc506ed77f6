// Kernels that build new lists out of existing values: list_append, to_list, list_seq,
// list_flatten and map_keys. Each gathers its output values with one Take over the (concatenated) inputs.
#include <arrow/compute/api.h>

#include "ketch/functions/nested/list_rows.h"
#include "ketch/functions/nested/nested_function_base.h"
#include "ketch/functions/nested/nested_functions.h"

namespace ketch::nested {
namespace {

using TypeVector = std::vector<std::shared_ptr<arrow::DataType>>;
namespace cp = arrow::compute;

bool Fits(const arrow::DataType& from, const arrow::DataType& to) {
  return from.id() == arrow::Type::NA || from.Equals(to) || cp::CanCast(from, to);
}

// list_append(list, item): each list with `item` (literal or column) added at its end; a null list
// stays null.
class ListAppend : public ScalarFunction {
 public:
  std::string name() const override { return "list_append"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(ExpectArgumentCount("list.append", 2, types));
    ARROW_RETURN_NOT_OK(ExpectListArgument("list.append", 0, types, exprs));
    auto value_type = ValueField(*types[0])->type();
    if (!Fits(*types[1], *value_type)) {
      return arrow::Status::TypeError("list.append: ", exprs[1]->ToString(), " of type ",
                                      types[1]->ToString(), " cannot be added to a list of ",
                                      value_type->ToString());
    }
    return VariableListOf(*types[0], ValueField(*types[0]));
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto list, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto rows, ToListRows(list));
    ARROW_ASSIGN_OR_RAISE(auto item, ToArray(args[1], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto item_cast, cp::Cast(item, rows.values->type()));
    ARROW_ASSIGN_OR_RAISE(auto pool, arrow::Concatenate({rows.values, item_cast.make_array()}));
    std::vector<int64_t> offsets(rows.length + 1, 0);
    arrow::Int64Builder take;
    for (int64_t i = 0; i < rows.length; ++i) {
      offsets[i + 1] = offsets[i];
      if (!rows.IsValid(i)) continue;
      for (int64_t k = rows.offsets[i]; k < rows.offsets[i + 1]; ++k) ARROW_RETURN_NOT_OK(take.Append(k));
      ARROW_RETURN_NOT_OK(take.Append(rows.values->length() + i));
      offsets[i + 1] += rows.Length(i) + 1;
    }
    ARROW_ASSIGN_OR_RAISE(auto indices, take.Finish());
    ARROW_ASSIGN_OR_RAISE(auto values, cp::Take(pool, indices));
    return MakeListArray(VariableListOf(*list->type(), ValueField(*list->type())), offsets, rows.valid,
                         values.make_array());
  }
};

// to_list(a, b, ...): one list per row holding the arguments' values (cast to the first one's type).
class ToList : public ScalarFunction {
 public:
  std::string name() const override { return "to_list"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    if (types.empty()) return arrow::Status::Invalid("to_list needs at least one item");
    auto value_type = ValueType(types);
    for (size_t i = 0; i < types.size(); ++i) {
      if (!Fits(*types[i], *value_type)) {
        return arrow::Status::TypeError("to_list: ", exprs[i]->ToString(), " of type ", types[i]->ToString(),
                                        " does not fit a list of ", value_type->ToString());
      }
    }
    return arrow::large_list(value_type);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    TypeVector types;
    for (const auto& arg : args) types.push_back(arg.type());
    auto value_type = ValueType(types);
    std::vector<std::shared_ptr<arrow::Array>> columns;
    for (const auto& arg : args) {
      ARROW_ASSIGN_OR_RAISE(auto array, ToArray(arg, ctx.num_rows));
      ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(array, value_type));
      columns.push_back(cast.make_array());
    }
    ARROW_ASSIGN_OR_RAISE(auto pool, arrow::Concatenate(columns));
    const int64_t n = ctx.num_rows;
    const int64_t width = static_cast<int64_t>(columns.size());
    arrow::Int64Builder take;
    ARROW_RETURN_NOT_OK(take.Reserve(n * width));
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < width; ++j) take.UnsafeAppend(j * n + i);
    }
    ARROW_ASSIGN_OR_RAISE(auto indices, take.Finish());
    ARROW_ASSIGN_OR_RAISE(auto values, cp::Take(pool, indices));
    std::vector<int64_t> offsets(n + 1);
    for (int64_t i = 0; i <= n; ++i) offsets[i] = i * width;
    return MakeListArray(arrow::large_list(value_type), offsets, std::vector<uint8_t>(n, 1),
                         values.make_array());
  }

 private:
  static std::shared_ptr<arrow::DataType> ValueType(const TypeVector& types) {
    for (const auto& type : types) {
      if (type->id() != arrow::Type::NA) return type;
    }
    return arrow::null();
  }
};

// list_seq(n): Daft's seq: one List[UInt64] per row, [0, 1, ..., n-1]; a null n gives null, n = 0
// an empty list, a negative n fails naming the value (Daft's ValueError).
class ListSeq : public ScalarFunction {
 public:
  std::string name() const override { return "list_seq"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(ExpectArgumentCount("seq", 1, types));
    if (!arrow::is_integer(types[0]->id()) && types[0]->id() != arrow::Type::NA) {
      return arrow::Status::TypeError("Expected input to seq to be of integer type, received: ",
                                      exprs[0]->ToString(), " of type ", types[0]->ToString());
    }
    return arrow::large_list(arrow::uint64());
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto n_array, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(n_array, arrow::int64()));
    const auto n_holder = cast.make_array();
    const auto& n = static_cast<const arrow::Int64Array&>(*n_holder);
    std::vector<int64_t> offsets(ctx.num_rows + 1, 0);
    std::vector<uint8_t> valid(ctx.num_rows, 1);
    arrow::UInt64Builder values;
    for (int64_t i = 0; i < ctx.num_rows; ++i) {
      offsets[i + 1] = offsets[i];
      if (n.IsNull(i)) {
        valid[i] = 0;
        continue;
      }
      if (n.Value(i) < 0) {
        return arrow::Status::Invalid("seq() requires non-negative n, received: ", n.Value(i));
      }
      ARROW_RETURN_NOT_OK(values.Reserve(n.Value(i)));
      for (int64_t k = 0; k < n.Value(i); ++k) values.UnsafeAppend(static_cast<uint64_t>(k));
      offsets[i + 1] += n.Value(i);
    }
    ARROW_ASSIGN_OR_RAISE(auto flat, values.Finish());
    return MakeListArray(arrow::large_list(arrow::uint64()), offsets, valid, flat);
  }
};

// list_flatten(list of lists): each row's inner lists concatenated; null inner lists add nothing.
class ListFlatten : public ScalarFunction {
 public:
  std::string name() const override { return "list_flatten"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(ExpectArgumentCount("list.flatten", 1, types));
    ARROW_RETURN_NOT_OK(ExpectListArgument("list.flatten", 0, types, exprs));
    auto inner = ValueField(*types[0])->type();
    if (!IsListLike(*inner) || inner->id() == arrow::Type::MAP) {
      return arrow::Status::TypeError("list.flatten expects a list of lists, but ", exprs[0]->ToString(),
                                      " has type ", types[0]->ToString());
    }
    return VariableListOf(*types[0], ValueField(*inner));
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto list, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto outer, ToListRows(list));
    ARROW_ASSIGN_OR_RAISE(auto inner, ToListRows(outer.values));
    std::vector<int64_t> offsets(outer.length + 1);
    for (int64_t i = 0; i <= outer.length; ++i) offsets[i] = inner.offsets[outer.offsets[i]];
    auto inner_type = ValueField(*list->type())->type();
    return MakeListArray(VariableListOf(*list->type(), ValueField(*inner_type)), offsets, outer.valid,
                         inner.values);
  }
};

// map_keys(map): each map's keys as a list; null for an empty map (Daft's value).
class MapKeys : public ScalarFunction {
 public:
  std::string name() const override { return "map_keys"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(ExpectArgumentCount("map_keys", 1, types));
    if (types[0]->id() != arrow::Type::MAP) {
      return arrow::Status::TypeError("map_keys expects a map, but ", exprs[0]->ToString(), " has type ",
                                      types[0]->ToString());
    }
    return arrow::large_list(static_cast<const arrow::MapType&>(*types[0]).key_type());
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto map, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto rows, ToListRows(map));
    auto keys = static_cast<const arrow::StructArray&>(*rows.values).field(0);
    // Daft's value for an empty map is null, not an empty list.
    for (int64_t i = 0; i < rows.length; ++i) {
      if (rows.Length(i) == 0) rows.valid[i] = 0;
    }
    return MakeListArray(arrow::large_list(keys->type()), rows.offsets, rows.valid, keys);
  }
};

}  // namespace

arrow::Status RegisterListBuildFunctions() {
  auto* registry = FunctionRegistry::Global();
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ListAppend>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ToList>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ListFlatten>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ListSeq>()));
  return registry->Register(std::make_shared<MapKeys>());
}

}  // namespace ketch::nested
