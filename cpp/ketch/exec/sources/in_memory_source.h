#pragma once

#include "ketch/exec/operator.h"

namespace ketch {

/// Emits batches held in memory (from_pydict, from_arrow, a collected result), without copying;
/// `partitions` gives each batch's partition (empty: all in partition 0).
class InMemorySource : public Source {
 public:
  explicit InMemorySource(std::vector<std::shared_ptr<arrow::RecordBatch>> batches,
                          std::vector<int64_t> partitions = {})
      : batches_(std::move(batches)), partitions_(std::move(partitions)) {}
  std::string name() const override { return "InMemoryScan"; }
  arrow::Status Produce(const Emit& emit) override {
    int64_t row = 0;
    for (size_t i = 0; i < batches_.size(); ++i) {
      ARROW_RETURN_NOT_OK(emit(batches_[i], row, nullptr, partitions_.empty() ? 0 : partitions_[i]));
      row += batches_[i]->num_rows();
    }
    return arrow::Status::OK();
  }

 private:
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
  std::vector<int64_t> partitions_;
};

}  // namespace ketch
