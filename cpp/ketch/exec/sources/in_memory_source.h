#pragma once

#include <arrow/api.h>

#include "ketch/exec/operator.h"
#include "ketch/functions/internal/source_row_function.h"

namespace ketch {

/// Emits batches held in memory (from_pydict, from_arrow, a collected result), without copying;
/// `partitions` gives each batch's partition (empty: all in partition 0). Rows are numbered from
/// `first_row` (0 unless this is a Ray task's piece of a larger source) across the batches, except in a batch
/// whose last column is the int64 column `internal::kSourceRowColumn` (rows a Ray task read from a source and
/// handed on to another): its values are then the rows' source rows, so errors and row-seeded functions above
/// name the rows of the original source. The column stays in the batch (it is in the node's schema); the task
/// projects it away above the source.
class InMemorySource : public Source {
 public:
  explicit InMemorySource(std::vector<std::shared_ptr<arrow::RecordBatch>> batches,
                          std::vector<int64_t> partitions = {}, int64_t first_row = 0)
      : batches_(std::move(batches)), partitions_(std::move(partitions)), first_row_(first_row) {}
  std::string name() const override { return "InMemoryScan"; }
  arrow::Status Produce(const Emit& emit) override {
    int64_t row = first_row_;
    for (size_t i = 0; i < batches_.size(); ++i) {
      const int64_t partition = partitions_.empty() ? 0 : partitions_[i];
      const std::shared_ptr<arrow::RecordBatch>& batch = batches_[i];
      const int last = batch->num_columns() - 1;
      if (last >= 0 && batch->schema()->field(last)->name() == internal::kSourceRowColumn &&
          batch->column(last)->type_id() == arrow::Type::INT64 && batch->column(last)->null_count() == 0) {
        auto source_rows = std::static_pointer_cast<arrow::Int64Array>(batch->column(last));
        const int64_t n = batch->num_rows();
        const int64_t first = n > 0 ? source_rows->Value(0) : row;
        // Contiguous rows (no filter dropped any) travel as their first row alone.
        ARROW_RETURN_NOT_OK(emit(batch, first, Contiguous(*source_rows) ? nullptr : source_rows, partition));
        row += n;
        continue;
      }
      ARROW_RETURN_NOT_OK(emit(batch, row, nullptr, partition));
      row += batch->num_rows();
    }
    return arrow::Status::OK();
  }

 private:
  static bool Contiguous(const arrow::Int64Array& rows) {
    for (int64_t i = 1; i < rows.length(); ++i) {
      if (rows.Value(i) != rows.Value(i - 1) + 1) return false;
    }
    return true;
  }

  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
  std::vector<int64_t> partitions_;
  int64_t first_row_ = 0;
};

}  // namespace ketch
