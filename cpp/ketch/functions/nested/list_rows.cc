#include "ketch/functions/nested/list_rows.h"

#include <arrow/compute/api.h>
#include <arrow/util/bit_util.h>

#include <cstring>
#include <limits>

namespace ketch::nested {

bool IsListLike(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::FIXED_SIZE_LIST:
    case arrow::Type::MAP:
      return true;
    default:
      return false;
  }
}

namespace {

struct RawList {
  std::shared_ptr<arrow::Array> values;
  std::vector<int64_t> starts;
  std::vector<int64_t> lengths;
};

template <typename ArrayType>
void ReadOffsets(const ArrayType& list, RawList* raw) {
  for (int64_t i = 0; i < list.length(); ++i) {
    raw->starts[i] = list.value_offset(i);
    raw->lengths[i] = list.value_length(i);
  }
}

}  // namespace

arrow::Result<ListRows> ToListRows(const std::shared_ptr<arrow::Array>& array) {
  if (!IsListLike(*array->type())) {
    return arrow::Status::TypeError("expected a list, got ", array->type()->ToString());
  }
  const int64_t n = array->length();
  RawList raw;
  raw.starts.resize(n);
  raw.lengths.resize(n);
  switch (array->type_id()) {
    case arrow::Type::LIST:
    case arrow::Type::MAP: {
      const auto& list = static_cast<const arrow::ListArray&>(*array);
      raw.values = list.values();
      ReadOffsets(list, &raw);
      break;
    }
    case arrow::Type::LARGE_LIST: {
      const auto& list = static_cast<const arrow::LargeListArray&>(*array);
      raw.values = list.values();
      ReadOffsets(list, &raw);
      break;
    }
    default: {
      const auto& list = static_cast<const arrow::FixedSizeListArray&>(*array);
      raw.values = list.values();
      ReadOffsets(list, &raw);
      break;
    }
  }
  ListRows rows;
  rows.length = n;
  rows.offsets.resize(n + 1);
  rows.valid.resize(n);
  rows.offsets[0] = 0;
  const bool contiguous = array->null_count() == 0;
  for (int64_t i = 0; i < n; ++i) {
    rows.valid[i] = array->IsValid(i) ? 1 : 0;
    const int64_t len = rows.valid[i] ? raw.lengths[i] : 0;
    rows.offsets[i + 1] = rows.offsets[i] + len;
  }
  if (n == 0) {
    rows.values = raw.values->Slice(0, 0);
  } else if (contiguous) {
    rows.values = raw.values->Slice(raw.starts[0], rows.offsets[n]);
  } else {
    arrow::Int64Builder indices;
    ARROW_RETURN_NOT_OK(indices.Reserve(rows.offsets[n]));
    for (int64_t i = 0; i < n; ++i) {
      if (!rows.valid[i]) continue;
      for (int64_t k = 0; k < raw.lengths[i]; ++k) indices.UnsafeAppend(raw.starts[i] + k);
    }
    ARROW_ASSIGN_OR_RAISE(auto index_array, indices.Finish());
    ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(raw.values, index_array));
    rows.values = taken.make_array();
  }
  return rows;
}

arrow::Result<std::shared_ptr<arrow::Array>> ListRows::ParentIndices() const {
  arrow::Int64Builder parents;
  ARROW_RETURN_NOT_OK(parents.Reserve(offsets[length]));
  for (int64_t i = 0; i < length; ++i) {
    for (int64_t k = offsets[i]; k < offsets[i + 1]; ++k) parents.UnsafeAppend(i);
  }
  return parents.Finish();
}

std::shared_ptr<arrow::DataType> VariableListOf(const arrow::DataType& input,
                                                std::shared_ptr<arrow::Field> value_field) {
  if (input.id() == arrow::Type::LIST) return arrow::list(std::move(value_field));
  return arrow::large_list(std::move(value_field));
}

arrow::Result<std::pair<std::shared_ptr<arrow::Buffer>, int64_t>> MakeValidity(
    const std::vector<uint8_t>& valid) {
  int64_t null_count = 0;
  for (uint8_t v : valid) null_count += v ? 0 : 1;
  if (null_count == 0) return std::make_pair(std::shared_ptr<arrow::Buffer>(), int64_t{0});
  ARROW_ASSIGN_OR_RAISE(auto bitmap, arrow::AllocateBitmap(static_cast<int64_t>(valid.size())));
  for (size_t i = 0; i < valid.size(); ++i) {
    arrow::bit_util::SetBitTo(bitmap->mutable_data(), static_cast<int64_t>(i), valid[i] != 0);
  }
  return std::make_pair(std::shared_ptr<arrow::Buffer>(std::move(bitmap)), null_count);
}

arrow::Result<std::shared_ptr<arrow::Array>> MakeListArray(const std::shared_ptr<arrow::DataType>& list_type,
                                                           const std::vector<int64_t>& offsets,
                                                           const std::vector<uint8_t>& valid,
                                                           std::shared_ptr<arrow::Array> values) {
  const int64_t n = static_cast<int64_t>(valid.size());
  ARROW_ASSIGN_OR_RAISE(auto validity, MakeValidity(valid));
  if (list_type->id() == arrow::Type::LIST) {
    if (offsets[n] > std::numeric_limits<int32_t>::max()) {
      return arrow::Status::CapacityError("list result holds more than 2^31 values; use large_list");
    }
    ARROW_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateBuffer((n + 1) * sizeof(int32_t)));
    auto* out = reinterpret_cast<int32_t*>(buffer->mutable_data());
    for (int64_t i = 0; i <= n; ++i) out[i] = static_cast<int32_t>(offsets[i]);
    return std::make_shared<arrow::ListArray>(list_type, n, std::shared_ptr<arrow::Buffer>(std::move(buffer)),
                                              std::move(values), validity.first, validity.second);
  }
  ARROW_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateBuffer((n + 1) * sizeof(int64_t)));
  std::memcpy(buffer->mutable_data(), offsets.data(), (n + 1) * sizeof(int64_t));
  return std::make_shared<arrow::LargeListArray>(list_type, n,
                                                 std::shared_ptr<arrow::Buffer>(std::move(buffer)),
                                                 std::move(values), validity.first, validity.second);
}

}  // namespace ketch::nested
