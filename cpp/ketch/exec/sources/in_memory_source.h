#pragma once

#include "ketch/exec/operator.h"

namespace ketch {

/// Emits batches held in memory (from_pydict, from_arrow), without copying.
class InMemorySource : public Source {
 public:
  explicit InMemorySource(std::vector<std::shared_ptr<arrow::RecordBatch>> batches)
      : batches_(std::move(batches)) {}
  std::string name() const override { return "InMemoryScan"; }
  arrow::Status Produce(const Emit& emit) override {
    int64_t row = 0;
    for (const auto& batch : batches_) {
      ARROW_RETURN_NOT_OK(emit(batch, row, nullptr));
      row += batch->num_rows();
    }
    return arrow::Status::OK();
  }

 private:
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
};

}  // namespace ketch
