#include "ketch/exec/blocking/sort_sink.h"

#include <arrow/compute/api.h>

namespace ketch {

arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> TableToBatches(const arrow::Table& table,
                                                                              int64_t rows) {
  arrow::TableBatchReader reader(table);
  reader.set_chunksize(rows);
  std::vector<std::shared_ptr<arrow::RecordBatch>> out;
  ARROW_ASSIGN_OR_RAISE(out, reader.ToRecordBatches());
  return out;
}

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> SortSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  if (morsel->num_rows() > 0) batches_.push_back(std::move(morsel));
  return std::optional<std::shared_ptr<arrow::RecordBatch>>();
}

arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> SortSink::Finalize() {
  ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(schema_, std::move(batches_)));
  if (table->num_rows() == 0) return std::vector<std::shared_ptr<arrow::RecordBatch>>{};
  std::vector<arrow::compute::SortKey> keys;
  for (size_t i = 0; i < spec_.keys.size(); ++i) {
    keys.emplace_back(arrow::FieldRef(spec_.keys[i]->name()),
                      spec_.descending[i] ? arrow::compute::SortOrder::Descending
                                          : arrow::compute::SortOrder::Ascending,
                      spec_.nulls_first[i] ? arrow::compute::NullPlacement::AtStart
                                           : arrow::compute::NullPlacement::AtEnd);
  }
  ARROW_ASSIGN_OR_RAISE(auto indices,
                        arrow::compute::SortIndices(arrow::Datum(table), arrow::compute::SortOptions(keys)));
  ARROW_ASSIGN_OR_RAISE(auto sorted, arrow::compute::Take(arrow::Datum(table), arrow::Datum(indices)));
  return TableToBatches(*sorted.table(), morsel_rows_);
}

}  // namespace ketch
