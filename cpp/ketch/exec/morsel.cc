#include "ketch/exec/morsel.h"

#include <arrow/compute/api.h>
#include <arrow/util/byte_size.h>

#include <algorithm>

namespace ketch {

int64_t BatchBytes(const arrow::RecordBatch& batch) {
  auto bytes = arrow::util::ReferencedBufferSize(batch);
  return bytes.ok() ? *bytes : arrow::util::TotalBufferSize(batch);
}

arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> TableToBatches(const arrow::Table& table,
                                                                               int64_t rows) {
  arrow::TableBatchReader reader(table);
  reader.set_chunksize(rows);
  return reader.ToRecordBatches();
}

arrow::Status EmitTable(const arrow::Table& table, int64_t rows, int64_t* next_row,
                        const Source::Emit& emit) {
  ARROW_ASSIGN_OR_RAISE(auto batches, TableToBatches(table, rows));
  for (auto& batch : batches) {
    const int64_t n = batch->num_rows();
    ARROW_RETURN_NOT_OK(emit(std::move(batch), *next_row, nullptr, 0));
    *next_row += n;
  }
  return arrow::Status::OK();
}

arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> SplitByPartition(
    const std::shared_ptr<arrow::RecordBatch>& batch, const std::shared_ptr<arrow::Int32Array>& partition_ids,
    int partitions) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> parts;
  for (int p = 0; p < partitions; ++p) {
    ARROW_ASSIGN_OR_RAISE(auto mask, arrow::compute::CallFunction("equal", {partition_ids, arrow::Datum(p)}));
    ARROW_ASSIGN_OR_RAISE(auto part, arrow::compute::Filter(batch, mask));
    parts.push_back(part.record_batch());
  }
  return parts;
}

arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> BlockingSink::Finalize() {
  std::vector<std::shared_ptr<arrow::RecordBatch>> out;
  ARROW_RETURN_NOT_OK(ProduceOutput(
      [&](std::shared_ptr<arrow::RecordBatch> batch, int64_t, std::shared_ptr<arrow::Int64Array>, int64_t) {
        out.push_back(std::move(batch));
        return arrow::Status::OK();
      }));
  return out;
}

arrow::Status EmitBatch(const std::shared_ptr<arrow::Schema>& schema,
                        std::shared_ptr<arrow::RecordBatch> batch, int64_t morsel_rows,
                        const Source::Emit& emit) {
  if (!batch) {
    ARROW_ASSIGN_OR_RAISE(batch, arrow::RecordBatch::MakeEmpty(schema));
  }
  ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(schema, {std::move(batch)}));
  int64_t next_row = 0;
  return EmitTable(*table, std::max<int64_t>(1, morsel_rows), &next_row, emit);
}

}  // namespace ketch
