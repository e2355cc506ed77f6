#pragma once

#include <arrow/api.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace ketch::nested {

/// True for list, large_list, fixed_size_list and map arrays (a map is a list of key/item structs).
bool IsListLike(const arrow::DataType& type);

/// A list column as dense rows: row i holds `values[offsets[i], offsets[i + 1])`; null rows hold no
/// values. Built from list, large_list, fixed_size_list or map arrays (sliced or not); values under
/// null rows are dropped, so every kernel sees one layout.
struct ListRows {
  int64_t length = 0;
  std::vector<int64_t> offsets;  // length + 1
  std::vector<uint8_t> valid;    // 1 where the row is not null
  std::shared_ptr<arrow::Array> values;

  int64_t Length(int64_t i) const { return offsets[i + 1] - offsets[i]; }
  bool IsValid(int64_t i) const { return valid[i] != 0; }
  /// Row `i`'s values as a zero-copy slice.
  std::shared_ptr<arrow::Array> Row(int64_t i) const { return values->Slice(offsets[i], Length(i)); }
  /// For every value, the row it belongs to (int64).
  arrow::Result<std::shared_ptr<arrow::Array>> ParentIndices() const;
};

arrow::Result<ListRows> ToListRows(const std::shared_ptr<arrow::Array>& array);

/// The type a list kernel returns for rows of `value_field`: list/large_list inputs keep their kind,
/// fixed_size_list and map inputs give large_list.
std::shared_ptr<arrow::DataType> VariableListOf(const arrow::DataType& input,
                                                std::shared_ptr<arrow::Field> value_field);

/// Builds a list array of `list_type` (list or large_list) from offsets, validity and values.
arrow::Result<std::shared_ptr<arrow::Array>> MakeListArray(const std::shared_ptr<arrow::DataType>& list_type,
                                                           const std::vector<int64_t>& offsets,
                                                           const std::vector<uint8_t>& valid,
                                                           std::shared_ptr<arrow::Array> values);

/// A validity bitmap (nullptr when every row is valid) and its null count.
arrow::Result<std::pair<std::shared_ptr<arrow::Buffer>, int64_t>> MakeValidity(
    const std::vector<uint8_t>& valid);

}  // namespace ketch::nested
