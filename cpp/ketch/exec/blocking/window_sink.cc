#include "ketch/exec/blocking/window_sink.h"

#include "ketch/exec/blocking/window_compute.h"
#include "ketch/expr/row_hash.h"

namespace ketch {

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> WindowSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  if (morsel->num_rows() > 0) {
    held_.Add(memory_, BatchBytes(*morsel), memory_tracker_);
    batches_.push_back(std::move(morsel));
    if (held_.bytes() > memory_->budget() / 2) ARROW_RETURN_NOT_OK(Spill());
  }
  return std::optional<std::shared_ptr<arrow::RecordBatch>>();
}

arrow::Status WindowSink::Spill() {
  const int buckets = spec_.partition_by.empty() ? 1 : kSpillBuckets;
  if (buckets_.empty()) {
    for (int b = 0; b < buckets; ++b) {
      ARROW_ASSIGN_OR_RAISE(auto file, SpillFile::Create(spill_dir_, input_schema_));
      buckets_.push_back(std::move(file));
    }
  }
  for (const auto& batch : batches_) {
    if (buckets == 1) {
      ARROW_RETURN_NOT_OK(buckets_[0]->Write(*batch));
      continue;
    }
    ARROW_ASSIGN_OR_RAISE(auto hashes, RowHashes(*batch, spec_.partition_by));
    arrow::Int32Builder ids;
    ARROW_RETURN_NOT_OK(ids.Reserve(batch->num_rows()));
    // The top bits of a multiplicative remix: an upstream shuffle (Ray) took hash % its buckets.
    for (uint64_t h : hashes) {
      ids.UnsafeAppend(
          static_cast<int32_t>(((h * 0x9E3779B97F4A7C15ULL) >> 32) % static_cast<uint64_t>(buckets)));
    }
    ARROW_ASSIGN_OR_RAISE(auto id_array, ids.Finish());
    ARROW_ASSIGN_OR_RAISE(
        auto parts, SplitByPartition(batch, std::static_pointer_cast<arrow::Int32Array>(id_array), buckets));
    for (int b = 0; b < buckets; ++b) {
      if (parts[b] && parts[b]->num_rows() > 0) ARROW_RETURN_NOT_OK(buckets_[b]->Write(*parts[b]));
    }
  }
  batches_.clear();
  held_.Clear();
  return arrow::Status::OK();
}

arrow::Status WindowSink::ComputeAndEmit(std::vector<std::shared_ptr<arrow::RecordBatch>> batches,
                                         int64_t* row, const Source::Emit& emit) {
  ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(input_schema_, std::move(batches)));
  if (table->num_rows() == 0) return arrow::Status::OK();
  ARROW_ASSIGN_OR_RAISE(auto out, ComputeWindow(spec_, functions_, std::move(table), output_schema_));
  return EmitTable(*out, morsel_rows_, row, emit);
}

arrow::Status WindowSink::ProduceOutput(const Source::Emit& emit) {
  int64_t row = 0;
  if (buckets_.empty()) {
    auto batches = std::move(batches_);
    batches_.clear();
    ARROW_RETURN_NOT_OK(ComputeAndEmit(std::move(batches), &row, emit));
    held_.Clear();
    return arrow::Status::OK();
  }
  ARROW_RETURN_NOT_OK(Spill());
  for (auto& file : buckets_) ARROW_RETURN_NOT_OK(file->FinishWriting());
  for (auto& file : buckets_) {
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
    int64_t bytes = 0;
    for (int64_t i = 0; i < file->num_batches(); ++i) {
      ARROW_ASSIGN_OR_RAISE(auto batch, file->ReadBatch(i));
      bytes += BatchBytes(*batch);
      batches.push_back(std::move(batch));
    }
    held_.Set(memory_, bytes, memory_tracker_);
    ARROW_RETURN_NOT_OK(ComputeAndEmit(std::move(batches), &row, emit));
    held_.Clear();
    file.reset();  // deletes the file
  }
  buckets_.clear();
  return arrow::Status::OK();
}

}  // namespace ketch
