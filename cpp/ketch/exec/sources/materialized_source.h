#pragma once

#include "ketch/exec/operator.h"

namespace ketch {

/// The output of a finished pipeline (a blocking sink's result), handed to the pipeline that
/// consumes it. Filled by the executor before the consuming pipeline starts.
struct MaterializedBatches {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  std::vector<int64_t> partitions;  ///< of each batch (empty: all in partition 0)
};

/// Emits the batches of one or more finished pipelines, in order (sort output, aggregate output,
/// concat of two inputs); each input's partitions are numbered after the previous input's.
class MaterializedSource : public Source {
 public:
  explicit MaterializedSource(std::vector<std::shared_ptr<MaterializedBatches>> inputs)
      : inputs_(std::move(inputs)) {}
  std::string name() const override { return "MaterializedScan"; }
  arrow::Status Produce(const Emit& emit) override {
    int64_t row = 0;
    int64_t base = 0;
    for (const auto& input : inputs_) {
      int64_t last = 0;
      for (size_t i = 0; i < input->batches.size(); ++i) {
        last = input->partitions.empty() ? 0 : input->partitions[i];
        ARROW_RETURN_NOT_OK(emit(input->batches[i], row, nullptr, base + last));
        row += input->batches[i]->num_rows();
      }
      base += last + 1;
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
