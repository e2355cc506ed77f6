#pragma once

#include "ketch/exec/operator.h"

namespace ketch {

/// The output of a finished pipeline (a blocking sink's result), handed to the pipeline that
/// consumes it. Filled by the executor before the consuming pipeline starts.
struct MaterializedBatches {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
};

/// Emits the batches of one or more finished pipelines, in order (sort output, aggregate output,
/// concat of two inputs).
class MaterializedSource : public Source {
 public:
  explicit MaterializedSource(std::vector<std::shared_ptr<MaterializedBatches>> inputs)
      : inputs_(std::move(inputs)) {}
  std::string name() const override { return "MaterializedScan"; }
  arrow::Status Produce(const Emit& emit) override {
    int64_t row = 0;
    for (const auto& input : inputs_) {
      for (const auto& batch : input->batches) {
        ARROW_RETURN_NOT_OK(emit(batch, row, nullptr));
        row += batch->num_rows();
      }
    }
    return arrow::Status::OK();
  }

 private:
  std::vector<std::shared_ptr<MaterializedBatches>> inputs_;
};

/// Streams the output of a finished pipeline's blocking sink (sort, aggregate) into the next one.
/// The sink stays owned by its pipeline, which outlives this source.
class SinkOutputSource : public Source {
 public:
  explicit SinkOutputSource(StreamingSink* sink) : sink_(sink) {}
  std::string name() const override { return sink_->name() + "Output"; }
  arrow::Status Produce(const Emit& emit) override { return sink_->ProduceOutput(emit); }

 private:
  StreamingSink* sink_;
};

}  // namespace ketch
