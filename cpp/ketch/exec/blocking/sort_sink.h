#pragma once

#include "ketch/exec/operator.h"
#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// Blocking sink: keeps every morsel, then sorts them all with Arrow's sort_indices (multi-key,
/// per-key direction and null placement, stable) and take. Output in morsels of `morsel_rows`.
class SortSink : public StreamingSink {
 public:
  SortSink(SortSpec spec, std::shared_ptr<arrow::Schema> schema, int64_t morsel_rows)
      : spec_(std::move(spec)), schema_(std::move(schema)), morsel_rows_(morsel_rows) {}
  std::string name() const override { return "Sort"; }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;
  arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> Finalize() override;

 private:
  SortSpec spec_;
  std::shared_ptr<arrow::Schema> schema_;
  int64_t morsel_rows_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
};

/// Splits a table into record batches of at most `rows` rows (zero-copy slices).
arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> TableToBatches(const arrow::Table& table,
                                                                              int64_t rows);

}  // namespace ketch
