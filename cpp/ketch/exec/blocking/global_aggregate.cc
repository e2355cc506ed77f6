#include "ketch/exec/blocking/global_aggregate.h"

#include <arrow/compute/api.h>

#include <cstring>
#include <limits>

namespace ketch {
namespace {

namespace cp = arrow::compute;

// The first non-null value of `values` (hash_one's choice within one thread), or a null.
arrow::Result<std::shared_ptr<arrow::Scalar>> FirstValid(const arrow::ChunkedArray& values) {
  for (const auto& chunk : values.chunks()) {
    if (chunk->null_count() == chunk->length()) continue;
    for (int64_t i = 0; i < chunk->length(); ++i) {
      if (chunk->IsValid(i)) return chunk->GetScalar(i);
    }
  }
  return arrow::MakeNullScalar(values.type());
}

// All values of `values` in order (nulls kept) as one list<T>; nullopt past int32 offsets.
arrow::Result<std::optional<std::shared_ptr<arrow::Array>>> AsOneList(const arrow::ChunkedArray& values) {
  if (values.length() > std::numeric_limits<int32_t>::max()) return std::nullopt;
  std::shared_ptr<arrow::Array> flat;
  if (values.num_chunks() == 1) {
    flat = values.chunk(0);
  } else if (values.num_chunks() == 0) {
    ARROW_ASSIGN_OR_RAISE(flat, arrow::MakeEmptyArray(values.type()));
  } else {
    ARROW_ASSIGN_OR_RAISE(flat, arrow::Concatenate(values.chunks()));
  }
  arrow::Int32Builder offsets;
  ARROW_RETURN_NOT_OK(offsets.AppendValues({0, static_cast<int32_t>(flat->length())}));
  ARROW_ASSIGN_OR_RAISE(auto offset_array, offsets.Finish());
  ARROW_ASSIGN_OR_RAISE(auto list, arrow::ListArray::FromArrays(*offset_array, *flat));
  return std::optional<std::shared_ptr<arrow::Array>>(std::move(list));
}

// Sum of the valid values of an int64/uint64 column as float64 (exact in 128 bits, then rounded
// once); null if none is valid.
template <typename ArrowType, typename Wide>
std::shared_ptr<arrow::Scalar> Float64SumOf(const arrow::ChunkedArray& values) {
  using CType = typename ArrowType::c_type;
  Wide sum = 0;
  int64_t valid = 0;
  for (const auto& chunk : values.chunks()) {
    const auto& array = static_cast<const arrow::NumericArray<ArrowType>&>(*chunk);
    const CType* raw = array.raw_values();
    const int64_t n = array.length();
    if (array.null_count() == 0) {
      for (int64_t i = 0; i < n; ++i) sum += raw[i];
      valid += n;
    } else {
      for (int64_t i = 0; i < n; ++i) {
        if (array.IsValid(i)) {
          sum += raw[i];
          ++valid;
        }
      }
    }
  }
  if (valid == 0) return arrow::MakeNullScalar(arrow::float64());
  return std::make_shared<arrow::DoubleScalar>(static_cast<double>(sum));
}

// The scalar function computing `hash_function` over all rows, or "" when there is none here.
std::string ScalarFunction(const std::string& hash_function) {
  if (hash_function == "hash_sum") return "sum";
  if (hash_function == "hash_count") return "count";
  if (hash_function == "hash_min") return "min";
  if (hash_function == "hash_max") return "max";
  if (hash_function == "hash_stddev") return "stddev";
  if (hash_function == "hash_variance") return "variance";
  if (hash_function == "hash_mean") return "mean";
  if (hash_function == "hash_skew") return "skew";
  if (hash_function == "hash_product") return "product";
  if (hash_function == "hash_all") return "all";
  if (hash_function == "hash_any") return "any";
  if (hash_function == "hash_count_distinct") return "count_distinct";
  return "";
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Array>> ZerosInt8(int64_t n) {
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> zeros, arrow::AllocateBuffer(n));
  if (n > 0) std::memset(zeros->mutable_data(), 0, static_cast<size_t>(n));
  return arrow::MakeArray(arrow::ArrayData::Make(arrow::int8(), n, {nullptr, std::move(zeros)}, 0));
}

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> GlobalAggregate(
    const arrow::Table& table, const std::vector<cp::Aggregate>& aggregates, const std::string& key) {
  using Out = std::optional<std::shared_ptr<arrow::RecordBatch>>;
  arrow::FieldVector fields{arrow::field(key, arrow::int8())};
  ARROW_ASSIGN_OR_RAISE(auto zero, arrow::MakeArrayFromScalar(arrow::Int8Scalar(0), 1));
  arrow::ArrayVector columns{std::move(zero)};
  for (const auto& aggregate : aggregates) {
    if (aggregate.target.size() != 1 || !aggregate.target[0].name()) return Out();
    auto values = table.GetColumnByName(*aggregate.target[0].name());
    if (!values)
      return arrow::Status::KeyError("aggregate input '", *aggregate.target[0].name(), "' is missing");
    std::shared_ptr<arrow::Array> column;
    if (aggregate.function == kGlobalFloat64Sum) {
      std::shared_ptr<arrow::Scalar> sum;
      if (values->type()->id() == arrow::Type::INT64) {
        sum = Float64SumOf<arrow::Int64Type, __int128>(*values);
      } else if (values->type()->id() == arrow::Type::UINT64) {
        sum = Float64SumOf<arrow::UInt64Type, unsigned __int128>(*values);
      } else {
        return arrow::Status::TypeError(kGlobalFloat64Sum, " takes int64 or uint64, not ",
                                        values->type()->ToString());
      }
      ARROW_ASSIGN_OR_RAISE(column, arrow::MakeArrayFromScalar(*sum, 1));
    } else if (aggregate.function == "hash_one") {
      ARROW_ASSIGN_OR_RAISE(auto one, FirstValid(*values));
      ARROW_ASSIGN_OR_RAISE(column, arrow::MakeArrayFromScalar(*one, 1));
    } else if (aggregate.function == "hash_list") {
      ARROW_ASSIGN_OR_RAISE(auto list, AsOneList(*values));
      if (!list) return Out();
      column = std::move(*list);
    } else {
      const std::string function = ScalarFunction(aggregate.function);
      if (function.empty()) return Out();
      auto result = cp::CallFunction(function, {arrow::Datum(values)}, aggregate.options.get());
      if (result.status().IsNotImplemented()) return Out();  // no kernel for this input type
      ARROW_ASSIGN_OR_RAISE(auto datum, std::move(result));
      std::shared_ptr<arrow::Scalar> scalar = datum.scalar();
      if (function == "sum" && arrow::is_decimal(values->type()->id()) &&
          !scalar->type->Equals(*values->type())) {
        // hash_sum keeps the decimal type (precision unchecked); "sum" widens the precision.
        auto keep = cp::CastOptions::Unsafe(values->type());
        ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(arrow::Datum(scalar), keep));
        scalar = cast.scalar();
      }
      ARROW_ASSIGN_OR_RAISE(column, arrow::MakeArrayFromScalar(*scalar, 1));
    }
    fields.push_back(arrow::field(aggregate.name, column->type()));
    columns.push_back(std::move(column));
  }
  auto batch = arrow::RecordBatch::Make(arrow::schema(std::move(fields)), 1, std::move(columns));
  if (table.num_rows() == 0) return Out(batch->Slice(0, 0));
  return Out(std::move(batch));
}

}  // namespace ketch
