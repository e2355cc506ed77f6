#include "ketch/exec/blocking/into_partitions.h"

#include "ketch/exec/blocking/repartition.h"

namespace ketch {

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> IntoPartitionsSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  if (morsel->num_rows() > 0) {
    held_.Add(memory_, BatchBytes(*morsel), memory_tracker_);
    inputs_[current_].push_back(std::move(morsel));
  }
  return std::optional<std::shared_ptr<arrow::RecordBatch>>();
}

namespace {

// The rows [offset, offset + length) of `batches` (zero-copy slices).
std::vector<std::shared_ptr<arrow::RecordBatch>> SliceRows(
    const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches, int64_t offset, int64_t length) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> out;
  for (const auto& batch : batches) {
    if (length <= 0) break;
    if (offset >= batch->num_rows()) {
      offset -= batch->num_rows();
      continue;
    }
    const int64_t take = std::min(batch->num_rows() - offset, length);
    out.push_back(batch->Slice(offset, take));
    length -= take;
    offset = 0;
  }
  return out;
}

}  // namespace

arrow::Status IntoPartitionsSink::ProduceOutput(const Source::Emit& emit) {
  // Input partitions are numbered densely from 0 up to the highest seen (one with no morsel at
  // all is empty).
  const int64_t m = inputs_.rbegin()->first + 1;
  std::vector<std::vector<std::shared_ptr<arrow::RecordBatch>>> in(static_cast<size_t>(m));
  for (auto& [p, batches] : inputs_) in[p] = std::move(batches);
  inputs_.clear();
  int64_t row = 0;
  int64_t out_partition = 0;
  auto emit_partition = [&](const std::vector<std::shared_ptr<arrow::RecordBatch>>& pieces) -> arrow::Status {
    ARROW_ASSIGN_OR_RAISE(auto batches, CoalesceBatches(pieces, morsel_rows_));
    if (batches.empty()) {
      ARROW_ASSIGN_OR_RAISE(auto empty, arrow::RecordBatch::MakeEmpty(schema_));
      batches.push_back(std::move(empty));
    }
    for (auto& batch : batches) {
      const int64_t n = batch->num_rows();
      ARROW_RETURN_NOT_OK(emit(std::move(batch), row, nullptr, out_partition));
      row += n;
    }
    ++out_partition;
    return arrow::Status::OK();
  };
  const int64_t n = num_partitions_;
  if (n >= m) {
    for (int64_t i = 0; i < m; ++i) {
      const int64_t pieces = n / m + (i < n % m ? 1 : 0);
      int64_t rows = 0;
      for (const auto& batch : in[i]) rows += batch->num_rows();
      int64_t offset = 0;
      for (int64_t j = 0; j < pieces; ++j) {
        const int64_t length = rows / pieces + (j < rows % pieces ? 1 : 0);
        ARROW_RETURN_NOT_OK(emit_partition(SliceRows(in[i], offset, length)));
        offset += length;
      }
      in[i].clear();
    }
  } else {
    int64_t next = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t count = m / n + (j < m % n ? 1 : 0);
      std::vector<std::shared_ptr<arrow::RecordBatch>> pieces;
      for (int64_t i = next; i < next + count; ++i) {
        pieces.insert(pieces.end(), in[i].begin(), in[i].end());
        in[i].clear();
      }
      next += count;
      ARROW_RETURN_NOT_OK(emit_partition(pieces));
    }
  }
  held_.Clear();
  return arrow::Status::OK();
}

}  // namespace ketch
