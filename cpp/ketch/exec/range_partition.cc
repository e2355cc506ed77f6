#include "ketch/exec/range_partition.h"

#include <arrow/compute/api.h>

#include "ketch/expr/key_storage.h"

namespace ketch {

namespace cp = arrow::compute;

namespace {

cp::SortOptions Options(const RangeKeys& keys) {
  std::vector<cp::SortKey> sort_keys;
  for (size_t i = 0; i < keys.columns.size(); ++i) {
    const bool nulls_first = i < keys.nulls_first.size() && keys.nulls_first[i];
    sort_keys.emplace_back(keys.columns[i],
                           i < keys.descending.size() && keys.descending[i] ? cp::SortOrder::Descending
                                                                            : cp::SortOrder::Ascending,
                           nulls_first ? cp::NullPlacement::AtStart : cp::NullPlacement::AtEnd);
  }
  return cp::SortOptions(std::move(sort_keys));
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> KeyColumns(const arrow::RecordBatch& batch,
                                                              const RangeKeys& keys) {
  arrow::FieldVector fields;
  arrow::ArrayVector columns;
  for (const auto& name : keys.columns) {
    const int i = batch.schema()->GetFieldIndex(name);
    if (i < 0) return arrow::Status::KeyError("range partitioning: no key column '", name, "'");
    fields.push_back(batch.schema()->field(i));
    columns.push_back(batch.column(i));
  }
  return arrow::RecordBatch::Make(arrow::schema(fields), batch.num_rows(), columns);
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::RecordBatch>> RangeBoundaries(
    const std::shared_ptr<arrow::Table>& sample, const RangeKeys& keys, int num_partitions) {
  if (num_partitions < 1) {
    return arrow::Status::Invalid("range partitioning needs at least one partition, got ", num_partitions);
  }
  ARROW_ASSIGN_OR_RAISE(auto combined, sample->CombineChunksToBatch());
  ARROW_ASSIGN_OR_RAISE(auto key_batch, KeyColumns(*combined, keys));
  // Extension keys (UUIDs) sort as their storage; the boundaries keep the keys' types.
  ARROW_ASSIGN_OR_RAISE(auto viewed, WithStorageColumns(key_batch, keys.columns));
  ARROW_ASSIGN_OR_RAISE(auto order, cp::SortIndices(viewed, Options(keys)));
  const int64_t n = key_batch->num_rows();
  arrow::Int64Builder picks;
  for (int i = 1; i < num_partitions && n > 0; ++i) {
    ARROW_RETURN_NOT_OK(
        picks.Append(static_cast<const arrow::UInt64Array&>(*order).Value(n * i / num_partitions)));
  }
  ARROW_ASSIGN_OR_RAISE(auto indices, picks.Finish());
  ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(key_batch, indices));
  return taken.record_batch();
}

arrow::Result<std::shared_ptr<arrow::Int32Array>> RangePartitionIds(
    const arrow::RecordBatch& batch, const RangeKeys& keys,
    const std::shared_ptr<arrow::RecordBatch>& key_boundaries) {
  ARROW_ASSIGN_OR_RAISE(auto key_columns, KeyColumns(batch, keys));
  ARROW_ASSIGN_OR_RAISE(auto key_batch, WithStorageColumns(key_columns, keys.columns));
  ARROW_ASSIGN_OR_RAISE(auto boundaries, WithStorageColumns(key_boundaries, keys.columns));
  const int64_t b = boundaries->num_rows();
  const int64_t n = key_batch->num_rows();
  if (!key_batch->schema()->Equals(*boundaries->schema(), /*check_metadata=*/false)) {
    return arrow::Status::TypeError("range partitioning: key types ", key_batch->schema()->ToString(),
                                    " differ from the boundaries' ", boundaries->schema()->ToString());
  }
  // Boundaries first, then the rows: a stable sort puts a row after the boundaries equal to it.
  ARROW_ASSIGN_OR_RAISE(auto both, arrow::ConcatenateRecordBatches({boundaries, key_batch}));
  ARROW_ASSIGN_OR_RAISE(auto order_array, cp::SortIndices(both, Options(keys)));
  const auto& order = static_cast<const arrow::UInt64Array&>(*order_array);
  std::vector<int32_t> ids(static_cast<size_t>(n), 0);
  int32_t seen = 0;  // boundaries passed so far in sort order
  for (int64_t i = 0; i < order.length(); ++i) {
    const auto row = static_cast<int64_t>(order.Value(i));
    if (row < b) {
      ++seen;
    } else {
      ids[static_cast<size_t>(row - b)] = seen;
    }
  }
  arrow::Int32Builder out;
  ARROW_RETURN_NOT_OK(out.AppendValues(ids));
  std::shared_ptr<arrow::Int32Array> result;
  ARROW_RETURN_NOT_OK(out.Finish(&result));
  return result;
}

arrow::Result<std::vector<std::shared_ptr<arrow::Table>>> RangePartitionTable(
    const std::shared_ptr<arrow::Table>& table, const RangeKeys& keys,
    const std::shared_ptr<arrow::RecordBatch>& boundaries, int num_partitions) {
  if (num_partitions < 1 || boundaries->num_rows() > num_partitions - 1) {
    return arrow::Status::Invalid("range partitioning: ", boundaries->num_rows(),
                                  " boundaries make more than ", num_partitions, " partitions");
  }
  std::vector<int> key_indices;
  for (const auto& name : keys.columns) {
    const int i = table->schema()->GetFieldIndex(name);
    if (i < 0) return arrow::Status::KeyError("range partitioning: no key column '", name, "'");
    key_indices.push_back(i);
  }
  ARROW_ASSIGN_OR_RAISE(auto key_table, table->SelectColumns(key_indices));
  ARROW_ASSIGN_OR_RAISE(auto key_batch, key_table->CombineChunksToBatch());
  ARROW_ASSIGN_OR_RAISE(auto ids, RangePartitionIds(*key_batch, keys, boundaries));
  // Counting sort of the row numbers by range, row order kept within each range.
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(num_partitions));
  for (int64_t i = 0; i < ids->length(); ++i) rows[static_cast<size_t>(ids->Value(i))].push_back(i);
  std::vector<std::shared_ptr<arrow::Table>> out;
  out.reserve(rows.size());
  for (const auto& range_rows : rows) {
    arrow::Int64Builder indices;
    ARROW_RETURN_NOT_OK(indices.AppendValues(range_rows));
    ARROW_ASSIGN_OR_RAISE(auto index_array, indices.Finish());
    ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(table, index_array));
    ARROW_ASSIGN_OR_RAISE(auto combined, taken.table()->CombineChunks());
    out.push_back(std::move(combined));
  }
  return out;
}

}  // namespace ketch
