// Row-wise list kernels. Each normalizes its input to ListRows (dense values, one offset per row), so
// list, large_list and fixed_size_list inputs, sliced or not, share one code path; the per-row work
// is index arithmetic followed by one Arrow Take.
#include <arrow/compute/api.h>

#include <algorithm>
#include <utility>

#include "ketch/functions/nested/list_rows.h"
#include "ketch/functions/nested/nested_function_base.h"
#include "ketch/functions/nested/nested_functions.h"

namespace ketch::nested {
namespace {

using TypeVector = std::vector<std::shared_ptr<arrow::DataType>>;
namespace cp = arrow::compute;

arrow::Result<std::shared_ptr<arrow::Int64Array>> ToInt64(const arrow::Datum& datum, int64_t num_rows) {
  ARROW_ASSIGN_OR_RAISE(auto array, ToArray(datum, num_rows));
  ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(array, arrow::int64()));
  return std::static_pointer_cast<arrow::Int64Array>(cast.make_array());
}

bool IsNullType(const arrow::DataType& type) { return type.id() == arrow::Type::NA; }

arrow::Status ExpectInteger(const std::string& label, size_t index, const TypeVector& types,
                            const std::vector<ExprPtr>& exprs, bool allow_null) {
  if (arrow::is_integer(types[index]->id()) || (allow_null && IsNullType(*types[index]))) {
    return arrow::Status::OK();
  }
  return arrow::Status::TypeError(label, " expects an integer, but ", exprs[index]->ToString(), " has type ",
                                  types[index]->ToString());
}

arrow::Status ExpectCastable(const std::string& label, size_t index, const TypeVector& types,
                             const std::vector<ExprPtr>& exprs, const arrow::DataType& target) {
  if (IsNullType(*types[index]) || types[index]->Equals(target) || cp::CanCast(*types[index], target)) {
    return arrow::Status::OK();
  }
  return arrow::Status::TypeError(label, ": ", exprs[index]->ToString(), " of type ",
                                  types[index]->ToString(), " cannot be compared with list values of type ",
                                  target.ToString());
}

// list_get(list, index, default): the element at `index` (negative counts from the end), `default`
// where the index is out of bounds.
class ListGet : public ScalarFunction {
 public:
  std::string name() const override { return "list_get"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(ExpectArgumentCount("list.get", 3, types));
    ARROW_RETURN_NOT_OK(ExpectListArgument("list.get", 0, types, exprs));
    ARROW_RETURN_NOT_OK(ExpectInteger("list.get", 1, types, exprs, false));
    auto value_type = ValueField(*types[0])->type();
    ARROW_RETURN_NOT_OK(ExpectCastable("list.get", 2, types, exprs, *value_type));
    return value_type;
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto list, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto rows, ToListRows(list));
    ARROW_ASSIGN_OR_RAISE(auto index, ToInt64(args[1], ctx.num_rows));
    arrow::Int64Builder take;
    arrow::BooleanBuilder out_of_bounds;
    ARROW_RETURN_NOT_OK(take.Reserve(rows.length));
    ARROW_RETURN_NOT_OK(out_of_bounds.Reserve(rows.length));
    for (int64_t i = 0; i < rows.length; ++i) {
      if (!rows.IsValid(i) || index->IsNull(i)) {
        take.UnsafeAppendNull();
        out_of_bounds.UnsafeAppend(false);
        continue;
      }
      const int64_t len = rows.Length(i);
      const int64_t k = index->Value(i) < 0 ? len + index->Value(i) : index->Value(i);
      if (k < 0 || k >= len) {
        take.UnsafeAppendNull();
        out_of_bounds.UnsafeAppend(true);
      } else {
        take.UnsafeAppend(rows.offsets[i] + k);
        out_of_bounds.UnsafeAppend(false);
      }
    }
    ARROW_ASSIGN_OR_RAISE(auto take_indices, take.Finish());
    ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(rows.values, take_indices));
    const auto& default_type = args[2].type();
    if (!default_type || IsNullType(*default_type)) return taken;
    ARROW_ASSIGN_OR_RAISE(auto mask, out_of_bounds.Finish());
    ARROW_ASSIGN_OR_RAISE(auto fallback, ToArray(args[2], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto fallback_cast, cp::Cast(fallback, rows.values->type()));
    return cp::CallFunction("if_else", {mask, fallback_cast, taken});
  }
};

// list_slice(list, start, end): Python-style slicing (negative indices count from the end, `end`
// null means to the end). A binary value is sliced by bytes (Daft's `slice`), giving LargeBinary.
class ListSlice : public ScalarFunction {
 public:
  std::string name() const override { return "list_slice"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(ExpectArgumentCount("list.slice", 3, types));
    const bool binary = IsBinary(*types[0]);
    if (!binary) ARROW_RETURN_NOT_OK(ExpectListArgument("list.slice", 0, types, exprs));
    ARROW_RETURN_NOT_OK(ExpectInteger("list.slice", 1, types, exprs, false));
    ARROW_RETURN_NOT_OK(ExpectInteger("list.slice", 2, types, exprs, true));
    if (binary) return arrow::large_binary();
    return VariableListOf(*types[0], ValueField(*types[0]));
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    if (IsBinary(*args[0].type())) return SliceBytes(args, ctx);
    ARROW_ASSIGN_OR_RAISE(auto list, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto rows, ToListRows(list));
    ARROW_ASSIGN_OR_RAISE(auto bounds, Bounds::Read(args, ctx));
    std::vector<int64_t> offsets(rows.length + 1, 0);
    std::vector<uint8_t> valid(rows.length, 0);
    arrow::Int64Builder take;
    for (int64_t i = 0; i < rows.length; ++i) {
      offsets[i + 1] = offsets[i];
      if (!rows.IsValid(i) || bounds.start->IsNull(i)) continue;
      valid[i] = 1;
      const auto [s, e] = bounds.Of(i, rows.Length(i));
      for (int64_t k = s; k < e; ++k) ARROW_RETURN_NOT_OK(take.Append(rows.offsets[i] + k));
      offsets[i + 1] += std::max<int64_t>(e - s, 0);
    }
    ARROW_ASSIGN_OR_RAISE(auto take_indices, take.Finish());
    ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(rows.values, take_indices));
    return MakeListArray(VariableListOf(*list->type(), ValueField(*list->type())), offsets, valid,
                         taken.make_array());
  }

 private:
  // The start and end arguments, and row i's [start, end) within a value of `len` items
  // (Python's slicing: negative counts from the end, clamped; a null end is the end).
  struct Bounds {
    std::shared_ptr<arrow::Int64Array> start, end;
    static arrow::Result<Bounds> Read(const std::vector<arrow::Datum>& args, const EvalContext& ctx) {
      Bounds out;
      ARROW_ASSIGN_OR_RAISE(out.start, ToInt64(args[1], ctx.num_rows));
      if (args[2].type() && !IsNullType(*args[2].type())) {
        ARROW_ASSIGN_OR_RAISE(out.end, ToInt64(args[2], ctx.num_rows));
      }
      return out;
    }
    std::pair<int64_t, int64_t> Of(int64_t i, int64_t len) const {
      auto clamp = [len](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + len : v, 0, len); };
      return {clamp(start->Value(i)), (end && end->IsValid(i)) ? clamp(end->Value(i)) : len};
    }
  };

  static bool IsBinary(const arrow::DataType& type) {
    return type.id() == arrow::Type::BINARY || type.id() == arrow::Type::LARGE_BINARY ||
           type.id() == arrow::Type::FIXED_SIZE_BINARY;
  }

  // Daft's slice of a binary value: its bytes [start, end), Python's rules as for lists.
  static arrow::Result<arrow::Datum> SliceBytes(const std::vector<arrow::Datum>& args,
                                                const EvalContext& ctx) {
    ARROW_ASSIGN_OR_RAISE(auto array, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(array, arrow::large_binary()));
    const auto holder = cast.make_array();
    const auto& bytes = static_cast<const arrow::LargeBinaryArray&>(*holder);
    ARROW_ASSIGN_OR_RAISE(auto bounds, Bounds::Read(args, ctx));
    arrow::LargeBinaryBuilder builder;
    for (int64_t i = 0; i < ctx.num_rows; ++i) {
      if (bytes.IsNull(i) || bounds.start->IsNull(i)) {
        ARROW_RETURN_NOT_OK(builder.AppendNull());
        continue;
      }
      const auto value = bytes.GetView(i);
      const auto [s, e] = bounds.Of(i, static_cast<int64_t>(value.size()));
      ARROW_RETURN_NOT_OK(builder.Append(value.substr(s, std::max<int64_t>(e - s, 0))));
    }
    return builder.Finish();
  }
};

// list_chunk(list; size): consecutive chunks of `size` values as fixed-size lists; a trailing
// partial chunk is dropped (Daft's rule).
class ListChunk : public ScalarFunction {
 public:
  std::string name() const override { return "list_chunk"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(ExpectArgumentCount("list.chunk", 1, types));
    ARROW_RETURN_NOT_OK(ExpectListArgument("list.chunk", 0, types, exprs));
    ARROW_ASSIGN_OR_RAISE(auto size, GetIntOption(options, "size", "list.chunk"));
    if (size <= 0 || size > std::numeric_limits<int32_t>::max()) {
      return arrow::Status::Invalid("list.chunk: size must be a positive integer, got ", size);
    }
    return ResultType(*types[0], static_cast<int32_t>(size));
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto size, GetIntOption(options, "size", "list.chunk"));
    ARROW_ASSIGN_OR_RAISE(auto list, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto rows, ToListRows(list));
    std::vector<int64_t> offsets(rows.length + 1, 0);
    arrow::Int64Builder take;
    for (int64_t i = 0; i < rows.length; ++i) {
      const int64_t chunks = rows.Length(i) / size;
      offsets[i + 1] = offsets[i] + chunks;
      for (int64_t k = 0; k < chunks * size; ++k) ARROW_RETURN_NOT_OK(take.Append(rows.offsets[i] + k));
    }
    ARROW_ASSIGN_OR_RAISE(auto take_indices, take.Finish());
    ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(rows.values, take_indices));
    auto result_type = ResultType(*list->type(), static_cast<int32_t>(size));
    auto chunk_type = result_type->field(0)->type();
    auto chunks = std::make_shared<arrow::FixedSizeListArray>(chunk_type, offsets.back(), taken.make_array());
    return MakeListArray(result_type, offsets, rows.valid, chunks);
  }

 private:
  static std::shared_ptr<arrow::DataType> ResultType(const arrow::DataType& input, int32_t size) {
    auto chunk = arrow::fixed_size_list(ValueField(input), size);
    return VariableListOf(input, arrow::field("item", chunk));
  }
};

// list_sort(list; desc, nulls_first): one stable sort of (row, value) pairs for the whole column.
class ListSort : public ScalarFunction {
 public:
  std::string name() const override { return "list_sort"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(ExpectArgumentCount("list.sort", 1, types));
    ARROW_RETURN_NOT_OK(ExpectListArgument("list.sort", 0, types, exprs));
    auto value_type = ValueField(*types[0])->type();
    ARROW_ASSIGN_OR_RAISE(auto empty, arrow::MakeEmptyArray(value_type));
    if (!cp::SortIndices(*empty).ok()) {
      return arrow::Status::TypeError("list.sort cannot order values of type ", value_type->ToString(),
                                      " in ", exprs[0]->ToString());
    }
    return VariableListOf(*types[0], ValueField(*types[0]));
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(bool desc, GetBoolOption(options, "desc", false));
    ARROW_ASSIGN_OR_RAISE(bool nulls_first, GetBoolOption(options, "nulls_first", false));
    ARROW_ASSIGN_OR_RAISE(auto list, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto rows, ToListRows(list));
    ARROW_ASSIGN_OR_RAISE(auto parents, rows.ParentIndices());
    auto schema =
        arrow::schema({arrow::field("row", arrow::int64()), arrow::field("value", rows.values->type())});
    auto batch = arrow::RecordBatch::Make(schema, rows.values->length(), {parents, rows.values});
    cp::SortOptions sort_options(
        {cp::SortKey("row", cp::SortOrder::Ascending),
         cp::SortKey("value", desc ? cp::SortOrder::Descending : cp::SortOrder::Ascending)},
        nulls_first ? cp::NullPlacement::AtStart : cp::NullPlacement::AtEnd);
    ARROW_ASSIGN_OR_RAISE(auto order, cp::SortIndices(arrow::Datum(batch), sort_options));
    ARROW_ASSIGN_OR_RAISE(auto sorted, cp::Take(rows.values, order));
    return MakeListArray(VariableListOf(*list->type(), ValueField(*list->type())), rows.offsets, rows.valid,
                         sorted.make_array());
  }
};

// list_distinct(list): the distinct non-null values of each row in order of first occurrence.
class ListDistinct : public ScalarFunction {
 public:
  std::string name() const override { return "list_distinct"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(ExpectArgumentCount("list.distinct", 1, types));
    ARROW_RETURN_NOT_OK(ExpectListArgument("list.distinct", 0, types, exprs));
    auto value_type = ValueField(*types[0])->type();
    ARROW_ASSIGN_OR_RAISE(auto empty, arrow::MakeEmptyArray(value_type));
    if (!cp::Unique(empty).ok()) {
      return arrow::Status::TypeError("list.distinct cannot compare values of type ", value_type->ToString(),
                                      " in ", exprs[0]->ToString());
    }
    return VariableListOf(*types[0], ValueField(*types[0]));
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto list, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto rows, ToListRows(list));
    std::vector<int64_t> offsets(rows.length + 1, 0);
    std::vector<std::shared_ptr<arrow::Array>> parts;
    for (int64_t i = 0; i < rows.length; ++i) {
      offsets[i + 1] = offsets[i];
      if (rows.Length(i) == 0) continue;
      ARROW_ASSIGN_OR_RAISE(auto unique, cp::Unique(rows.Row(i)));
      ARROW_ASSIGN_OR_RAISE(auto non_null, cp::DropNull(unique));
      offsets[i + 1] += non_null.length();
      parts.push_back(non_null.make_array());
    }
    std::shared_ptr<arrow::Array> values;
    if (parts.empty()) {
      ARROW_ASSIGN_OR_RAISE(values, arrow::MakeEmptyArray(rows.values->type()));
    } else {
      ARROW_ASSIGN_OR_RAISE(values, arrow::Concatenate(parts));
    }
    return MakeListArray(VariableListOf(*list->type(), ValueField(*list->type())), offsets, rows.valid,
                         values);
  }
};

// list_value_counts(list): map<value, uint64> of each row's non-null values and their counts, keys in
// order of first occurrence.
class ListValueCounts : public ScalarFunction {
 public:
  std::string name() const override { return "list_value_counts"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(ExpectArgumentCount("list.value_counts", 1, types));
    ARROW_RETURN_NOT_OK(ExpectListArgument("list.value_counts", 0, types, exprs));
    auto value_type = ValueField(*types[0])->type();
    ARROW_ASSIGN_OR_RAISE(auto empty, arrow::MakeEmptyArray(value_type));
    if (!cp::ValueCounts(empty).ok()) {
      return arrow::Status::TypeError("list.value_counts cannot count values of type ",
                                      value_type->ToString(), " in ", exprs[0]->ToString());
    }
    return arrow::map(value_type, arrow::uint64());
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto list, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto rows, ToListRows(list));
    const auto value_type = rows.values->type();
    std::vector<int64_t> offsets(rows.length + 1, 0);
    std::vector<std::shared_ptr<arrow::Array>> keys;
    std::vector<std::shared_ptr<arrow::Array>> counts;
    for (int64_t i = 0; i < rows.length; ++i) {
      offsets[i + 1] = offsets[i];
      if (rows.Length(i) == 0) continue;
      ARROW_ASSIGN_OR_RAISE(auto counted, cp::ValueCounts(rows.Row(i)));
      ARROW_ASSIGN_OR_RAISE(auto is_valid, cp::IsValid(counted->field(0)));
      ARROW_ASSIGN_OR_RAISE(auto row_keys, cp::Filter(counted->field(0), is_valid));
      ARROW_ASSIGN_OR_RAISE(auto row_counts, cp::Filter(counted->field(1), is_valid));
      ARROW_ASSIGN_OR_RAISE(auto row_counts_u64, cp::Cast(row_counts, arrow::uint64()));
      offsets[i + 1] += row_keys.length();
      keys.push_back(row_keys.make_array());
      counts.push_back(row_counts_u64.make_array());
    }
    std::shared_ptr<arrow::Array> key_values, count_values;
    if (keys.empty()) {
      ARROW_ASSIGN_OR_RAISE(key_values, arrow::MakeEmptyArray(value_type));
      ARROW_ASSIGN_OR_RAISE(count_values, arrow::MakeEmptyArray(arrow::uint64()));
    } else {
      ARROW_ASSIGN_OR_RAISE(key_values, arrow::Concatenate(keys));
      ARROW_ASSIGN_OR_RAISE(count_values, arrow::Concatenate(counts));
    }
    if (offsets.back() > std::numeric_limits<int32_t>::max()) {
      return arrow::Status::CapacityError("list.value_counts: more than 2^31 map entries in one morsel");
    }
    ARROW_ASSIGN_OR_RAISE(auto offset_buffer, arrow::AllocateBuffer((rows.length + 1) * sizeof(int32_t)));
    auto* out = reinterpret_cast<int32_t*>(offset_buffer->mutable_data());
    for (int64_t i = 0; i <= rows.length; ++i) out[i] = static_cast<int32_t>(offsets[i]);
    ARROW_ASSIGN_OR_RAISE(auto validity, MakeValidity(rows.valid));
    return std::make_shared<arrow::MapArray>(arrow::map(value_type, arrow::uint64()), rows.length,
                                             std::shared_ptr<arrow::Buffer>(std::move(offset_buffer)),
                                             key_values, count_values, validity.first, validity.second);
  }
};

// list_contains(list, item): true where a non-null element equals `item`; null where the row or
// the item is null.
class ListContains : public ScalarFunction {
 public:
  std::string name() const override { return "list_contains"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(ExpectArgumentCount("list.contains", 2, types));
    ARROW_RETURN_NOT_OK(ExpectListArgument("list.contains", 0, types, exprs));
    ARROW_RETURN_NOT_OK(ExpectCastable("list.contains", 1, types, exprs, *ValueField(*types[0])->type()));
    return arrow::boolean();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto list, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto rows, ToListRows(list));
    ARROW_ASSIGN_OR_RAISE(auto item, ToArray(args[1], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto item_cast, cp::Cast(item, rows.values->type()));
    ARROW_ASSIGN_OR_RAISE(auto parents, rows.ParentIndices());
    ARROW_ASSIGN_OR_RAISE(auto broadcast, cp::Take(item_cast, parents));
    ARROW_ASSIGN_OR_RAISE(auto equal, cp::CallFunction("equal", {rows.values, broadcast}));
    auto matches = std::static_pointer_cast<arrow::BooleanArray>(equal.make_array());
    arrow::BooleanBuilder out;
    ARROW_RETURN_NOT_OK(out.Reserve(rows.length));
    const auto item_holder = item_cast.make_array();  // the Array must outlive `item_array`
    const auto& item_array = *item_holder;
    for (int64_t i = 0; i < rows.length; ++i) {
      if (!rows.IsValid(i) || item_array.IsNull(i)) {
        out.UnsafeAppendNull();
        continue;
      }
      bool found = false;
      for (int64_t k = rows.offsets[i]; k < rows.offsets[i + 1] && !found; ++k) {
        found = matches->IsValid(k) && matches->Value(k);
      }
      out.UnsafeAppend(found);
    }
    return out.Finish();
  }
};

// list_count(list; mode): the number of "valid" (non-null, the default), "null" or "all" elements.
class ListCount : public ScalarFunction {
 public:
  std::string name() const override { return "list_count"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions& options) const override {
    ARROW_RETURN_NOT_OK(ExpectArgumentCount("list.count", 1, types));
    if (!IsListLike(*types[0])) {
      return arrow::Status::TypeError("list.count expects a list, but ", exprs[0]->ToString(), " has type ",
                                      types[0]->ToString());
    }
    ARROW_RETURN_NOT_OK(Mode(options).status());
    return arrow::uint64();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions& options,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto mode, Mode(options));
    ARROW_ASSIGN_OR_RAISE(auto list, ToArray(args[0], ctx.num_rows));
    // Straight from the offsets: ToListRows would first copy every value out from under null rows.
    switch (list->type_id()) {
      case arrow::Type::LIST:
      case arrow::Type::MAP:
        return Count(static_cast<const arrow::ListArray&>(*list), mode);
      case arrow::Type::LARGE_LIST:
        return Count(static_cast<const arrow::LargeListArray&>(*list), mode);
      case arrow::Type::FIXED_SIZE_LIST:
        return Count(static_cast<const arrow::FixedSizeListArray&>(*list), mode);
      default:
        return arrow::Status::TypeError("list.count expects a list, got ", list->type()->ToString());
    }
  }

 private:
  template <typename ListArrayType>
  static arrow::Result<std::shared_ptr<arrow::Array>> Count(const ListArrayType& list,
                                                            const std::string& mode) {
    const auto& values = *list.values();
    const bool all_mode = mode == "all";
    const bool null_mode = mode == "null";
    const bool count_nulls = !all_mode && values.null_count() > 0;
    arrow::UInt64Builder out;
    ARROW_RETURN_NOT_OK(out.Reserve(list.length()));
    for (int64_t i = 0; i < list.length(); ++i) {
      if (list.IsNull(i)) {
        out.UnsafeAppendNull();
        continue;
      }
      const int64_t start = list.value_offset(i);
      const int64_t all = list.value_length(i);
      int64_t nulls = 0;
      if (count_nulls) {
        for (int64_t k = start; k < start + all; ++k) nulls += values.IsNull(k);
      }
      out.UnsafeAppend(static_cast<uint64_t>(all_mode ? all : null_mode ? nulls : all - nulls));
    }
    return out.Finish();
  }

  static arrow::Result<std::string> Mode(const FunctionOptions& options) {
    if (!HasOption(options, "mode")) return std::string("valid");
    ARROW_ASSIGN_OR_RAISE(auto mode, GetStringOption(options, "mode", "list.count"));
    if (mode != "valid" && mode != "null" && mode != "all") {
      return arrow::Status::Invalid("list.count: mode must be 'valid', 'null' or 'all', got '", mode, "'");
    }
    return mode;
  }
};

// list_join(list, delimiter): Arrow's binary_join with the delimiter cast to the list's string type
// (Arrow wants both the same), so string / large_string lists and literals mix freely.
class ListJoin : public ScalarFunction {
 public:
  std::string name() const override { return "list_join"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(const TypeVector& types,
                                                              const std::vector<ExprPtr>& exprs,
                                                              const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(ExpectArgumentCount("list.join", 2, types));
    ARROW_RETURN_NOT_OK(ExpectListArgument("list.join", 0, types, exprs));
    auto value_type = ValueField(*types[0])->type();
    if (!arrow::is_base_binary_like(value_type->id()) && value_type->id() != arrow::Type::NA) {
      return arrow::Status::TypeError("list.join expects a list of strings, but ", exprs[0]->ToString(),
                                      " has type ", types[0]->ToString());
    }
    if (!arrow::is_base_binary_like(types[1]->id()) && types[1]->id() != arrow::Type::NA) {
      return arrow::Status::TypeError("list.join expects a string delimiter, but ", exprs[1]->ToString(),
                                      " has type ", types[1]->ToString());
    }
    return value_type->id() == arrow::Type::NA ? arrow::large_utf8() : value_type;
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto list, ToArray(args[0], ctx.num_rows));
    auto value_type = ValueField(*list->type())->type();
    if (value_type->id() == arrow::Type::NA) value_type = arrow::large_utf8();
    // binary_join takes list or large_list of strings; fixed-size lists and null values are cast.
    auto list_type = VariableListOf(*list->type(), arrow::field("item", value_type));
    ARROW_ASSIGN_OR_RAISE(auto lists, cp::Cast(list, list_type));
    ARROW_ASSIGN_OR_RAISE(auto delimiter, ToArray(args[1], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto delimiter_cast, cp::Cast(delimiter, value_type));
    return cp::CallFunction("binary_join", {lists, delimiter_cast});
  }
};

}  // namespace

arrow::Status RegisterListFunctions() {
  auto* registry = FunctionRegistry::Global();
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ListGet>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ListSlice>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ListChunk>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ListSort>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ListDistinct>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ListValueCounts>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ListContains>()));
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<ListJoin>()));
  return registry->Register(std::make_shared<ListCount>());
}

arrow::Status RegisterNestedFunctions() {
  ARROW_RETURN_NOT_OK(RegisterListFunctions());
  ARROW_RETURN_NOT_OK(RegisterListAggregateFunctions());
  ARROW_RETURN_NOT_OK(RegisterListBuildFunctions());
  ARROW_RETURN_NOT_OK(RegisterListLambdaFunctions());
  return RegisterStructMapFunctions();
}

}  // namespace ketch::nested
