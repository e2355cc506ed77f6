// struct_get (Arrow's struct_field with its options), to_struct and map_get (our own: Arrow's map_lookup only
// takes one literal key, Daft's map_get also takes a key column).
#include <arrow/compute/api.h>

#include <algorithm>
#include <sstream>
#include <utility>

#include "ketch/functions/nested/list_rows.h"
#include "ketch/functions/nested/nested_function_base.h"
#include "ketch/functions/nested/nested_functions.h"

namespace ketch::nested {
namespace {

namespace cp = arrow::compute;

class StructGet : public ScalarFunction {
 public:
  std::string name() const override { return "struct_field_get"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(ExpectArgumentCount("struct.get", 1, types));
    ARROW_ASSIGN_OR_RAISE(auto field_name, GetStringOption(options, "name", "struct.get"));
    if (types[0]->id() != arrow::Type::STRUCT) {
      return arrow::Status::TypeError("struct.get expects a struct, but ", exprs[0]->ToString(), " has type ",
                                      types[0]->ToString());
    }
    const auto& struct_type = static_cast<const arrow::StructType&>(*types[0]);
    auto field = struct_type.GetFieldByName(field_name);
    if (!field) {
      std::ostringstream names;
      for (int i = 0; i < struct_type.num_fields(); ++i)
        names << (i ? ", " : "") << struct_type.field(i)->name();
      return arrow::Status::Invalid("struct.get: ", exprs[0]->ToString(), " has no field '", field_name,
                                    "' (fields: ", names.str(), ")");
    }
    return field->type();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto field_name, GetStringOption(options, "name", "struct.get"));
    ARROW_ASSIGN_OR_RAISE(auto array, ToArray(args[0], ctx.num_rows));
    cp::StructFieldOptions field_options{arrow::FieldRef(field_name)};
    return cp::CallFunction("struct_field", {array}, &field_options);
  }
};

class MapGet : public ScalarFunction {
 public:
  std::string name() const override { return "map_get"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(ExpectArgumentCount("map.get", 2, types));
    if (types[0]->id() != arrow::Type::MAP) {
      return arrow::Status::TypeError("map.get expects a map, but ", exprs[0]->ToString(), " has type ",
                                      types[0]->ToString());
    }
    const auto& map_type = static_cast<const arrow::MapType&>(*types[0]);
    if (types[1]->id() != arrow::Type::NA && !types[1]->Equals(*map_type.key_type()) &&
        !cp::CanCast(*types[1], *map_type.key_type())) {
      return arrow::Status::TypeError("map.get: key ", exprs[1]->ToString(), " of type ",
                                      types[1]->ToString(), " does not match the map's key type ",
                                      map_type.key_type()->ToString());
    }
    return map_type.item_type();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto map, ToArray(args[0], ctx.num_rows));
    const auto& map_type = static_cast<const arrow::MapType&>(*map->type());
    ARROW_ASSIGN_OR_RAISE(auto rows, ToListRows(map));
    const auto& entries = static_cast<const arrow::StructArray&>(*rows.values);
    auto keys = entries.field(0);
    auto items = entries.field(1);
    ARROW_ASSIGN_OR_RAISE(auto key, ToArray(args[1], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto key_cast, cp::Cast(key, map_type.key_type()));
    ARROW_ASSIGN_OR_RAISE(auto parents, rows.ParentIndices());
    ARROW_ASSIGN_OR_RAISE(auto broadcast, cp::Take(key_cast, parents));
    ARROW_ASSIGN_OR_RAISE(auto equal, cp::CallFunction("equal", {keys, broadcast}));
    auto matches = std::static_pointer_cast<arrow::BooleanArray>(equal.make_array());
    arrow::Int64Builder take;
    ARROW_RETURN_NOT_OK(take.Reserve(rows.length));
    for (int64_t i = 0; i < rows.length; ++i) {
      int64_t found = -1;
      for (int64_t k = rows.offsets[i]; k < rows.offsets[i + 1] && found < 0; ++k) {
        if (matches->IsValid(k) && matches->Value(k)) found = k;
      }
      if (found < 0) {
        take.UnsafeAppendNull();
      } else {
        take.UnsafeAppend(found);
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto take_indices, take.Finish());
    return cp::Take(items, take_indices);
  }
};

// to_struct(a, b, ...) with option `names` (one per argument, from Python: each expression's
// name or keyword): one struct per row with those fields; never null itself. A name given twice
// keeps one field, the last argument's (what Daft 0.7.26 gives).
class ToStruct : public ScalarFunction {
 public:
  std::string name() const override { return "to_struct"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>&,
      const FunctionOptions& options) const override {
    ARROW_ASSIGN_OR_RAISE(auto layout, Layout(types.size(), options));
    arrow::FieldVector fields;
    for (const auto& [name, index] : layout) fields.push_back(arrow::field(name, types[index]));
    return arrow::struct_(fields);
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto layout, Layout(args.size(), options));
    arrow::ArrayVector children;
    std::vector<std::string> names;
    for (const auto& [name, index] : layout) {
      ARROW_ASSIGN_OR_RAISE(auto child, ToArray(args[index], ctx.num_rows));
      children.push_back(std::move(child));
      names.push_back(name);
    }
    if (children.empty()) return arrow::Status::Invalid("Cannot call struct with no inputs");
    return arrow::StructArray::Make(children, names);
  }

 private:
  // (field name, argument index) in the order of first appearance, each name's last argument.
  static arrow::Result<std::vector<std::pair<std::string, size_t>>> Layout(size_t count,
                                                                           const FunctionOptions& options) {
    if (count == 0) return arrow::Status::Invalid("Cannot call struct with no inputs");
    auto it = options.find("names");
    if (it == options.end() || !it->second || !it->second->is_valid) {
      return arrow::Status::Invalid("to_struct needs the option 'names'");
    }
    const auto& list = static_cast<const arrow::BaseListScalar&>(*it->second);
    ARROW_ASSIGN_OR_RAISE(auto names, cp::Cast(list.value, arrow::utf8()));
    const auto holder = names.make_array();
    const auto& text = static_cast<const arrow::StringArray&>(*holder);
    if (static_cast<size_t>(text.length()) != count) {
      return arrow::Status::Invalid("to_struct: ", text.length(), " names for ", count, " fields");
    }
    std::vector<std::pair<std::string, size_t>> layout;
    for (size_t i = 0; i < count; ++i) {
      std::string name(text.GetView(static_cast<int64_t>(i)));
      auto same = std::find_if(layout.begin(), layout.end(), [&](const auto& f) { return f.first == name; });
      if (same != layout.end()) {
        same->second = i;
      } else {
        layout.emplace_back(std::move(name), i);
      }
    }
    return layout;
  }
};

}  // namespace

arrow::Status RegisterStructMapFunctions() {
  ARROW_RETURN_NOT_OK(FunctionRegistry::Global()->Register(std::make_shared<StructGet>()));
  ARROW_RETURN_NOT_OK(FunctionRegistry::Global()->Register(std::make_shared<ToStruct>()));
  return FunctionRegistry::Global()->Register(std::make_shared<MapGet>());
}

}  // namespace ketch::nested
