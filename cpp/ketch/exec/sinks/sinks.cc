#include "ketch/exec/sinks/sinks.h"

#include <algorithm>

namespace ketch {

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> LimitSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  last_start_ = 0;
  if (remaining_ <= 0) return std::optional<std::shared_ptr<arrow::RecordBatch>>();
  if (to_skip_ > 0) {
    const int64_t skip = std::min(to_skip_, morsel->num_rows());
    last_start_ = skip;
    to_skip_ -= skip;
    morsel = morsel->Slice(skip);
    if (morsel->num_rows() == 0) return std::optional<std::shared_ptr<arrow::RecordBatch>>();
  }
  if (morsel->num_rows() > remaining_) morsel = morsel->Slice(0, remaining_);
  remaining_ -= morsel->num_rows();
  return std::optional<std::shared_ptr<arrow::RecordBatch>>(std::move(morsel));
}

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> MonotonicIdSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  const int64_t n = morsel->num_rows();
  ARROW_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateBuffer(n * static_cast<int64_t>(sizeof(uint64_t))));
  auto* ids = reinterpret_cast<uint64_t*>(buffer->mutable_data());
  for (int64_t i = 0; i < n; ++i) ids[i] = next_ + static_cast<uint64_t>(i);
  next_ += static_cast<uint64_t>(n);
  auto column = std::make_shared<arrow::UInt64Array>(n, std::move(buffer));
  std::vector<std::shared_ptr<arrow::Array>> columns = morsel->columns();
  columns.push_back(std::move(column));
  return std::optional<std::shared_ptr<arrow::RecordBatch>>(
      arrow::RecordBatch::Make(schema_, n, std::move(columns)));
}

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> CollectSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  const bool kept_empty =
      !batches_.empty() && partitions_.back() == partition_ && batches_.back()->num_rows() == 0;
  if (morsel->num_rows() == 0) {
    // Kept only to announce its partition (and, first of all, the schema).
    if (!announced_ && !kept_empty) {
      batches_.push_back(std::move(morsel));
      partitions_.push_back(partition_);
    }
  } else {
    if (kept_empty) {  // the partition has rows after all: its announcement goes
      batches_.pop_back();
      partitions_.pop_back();
    }
    batches_.push_back(std::move(morsel));
    partitions_.push_back(partition_);
  }
  announced_ = true;
  return std::optional<std::shared_ptr<arrow::RecordBatch>>();
}

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> ConsumerSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  if (morsel->num_rows() > 0 || !announced_) {
    announced_ = true;
    ARROW_RETURN_NOT_OK(consumer_->Consume(partition_, std::move(morsel)));
  }
  return std::optional<std::shared_ptr<arrow::RecordBatch>>();
}

}  // namespace ketch
