#include "ketch/exec/blocking/repartition.h"

#include <arrow/compute/api.h>

#include <random>

#include "ketch/exec/morsel.h"
#include "ketch/expr/row_hash.h"

namespace ketch {

namespace cp = arrow::compute;

arrow::Result<std::shared_ptr<arrow::RecordBatch>> PartitionIdOperator::Execute(
    const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const {
  const int64_t n = morsel->num_rows();
  arrow::Int32Builder ids;
  ARROW_RETURN_NOT_OK(ids.Reserve(n));
  if (keys_.empty()) {
    // A start that differs per morsel and per query (seed), then round-robin.
    std::mt19937_64 rng(seed_ ^ (static_cast<uint64_t>(ctx->SourceRow(0)) * 0x9e3779b97f4a7c15ULL));
    int64_t p = n > 0 ? static_cast<int64_t>(rng() % static_cast<uint64_t>(num_partitions_)) : 0;
    for (int64_t i = 0; i < n; ++i) {
      ids.UnsafeAppend(static_cast<int32_t>(p));
      if (++p == num_partitions_) p = 0;
    }
  } else {
    ARROW_ASSIGN_OR_RAISE(auto hashes, RowHashes(*morsel, keys_));
    for (uint64_t h : hashes)
      ids.UnsafeAppend(static_cast<int32_t>(h % static_cast<uint64_t>(num_partitions_)));
  }
  std::shared_ptr<arrow::Array> id_array;
  ARROW_RETURN_NOT_OK(ids.Finish(&id_array));
  // Group rows by partition (stable: input order kept within each partition).
  ARROW_ASSIGN_OR_RAISE(auto order, cp::SortIndices(*id_array, cp::SortOptions({cp::SortKey("")})));
  ARROW_ASSIGN_OR_RAISE(
      auto with_ids,
      morsel->AddColumn(morsel->num_columns(), arrow::field(kPartitionIdColumn, arrow::int32()), id_array));
  ARROW_ASSIGN_OR_RAISE(auto grouped, cp::Take(with_ids, order));
  ctx->source_rows = nullptr;  // rows are reordered: errors above name morsel rows no longer
  return grouped.record_batch();
}

arrow::Status RepartitionSink::Add(int64_t partition, std::shared_ptr<arrow::RecordBatch> piece) {
  if (!spilled_.empty()) return spilled_[partition]->Write(*piece);
  held_.Count(BatchBytes(*piece));
  buckets_[partition].push_back(std::move(piece));
  return arrow::Status::OK();
}

arrow::Status RepartitionSink::SpillAll() {
  for (int64_t p = 0; p < num_partitions_; ++p) {
    ARROW_ASSIGN_OR_RAISE(auto file, SpillFile::Create(spill_dir_, schema_));
    spilled_.push_back(std::move(file));
  }
  for (int64_t p = 0; p < num_partitions_; ++p) {
    for (const auto& piece : buckets_[p]) ARROW_RETURN_NOT_OK(spilled_[p]->Write(*piece));
    buckets_[p].clear();
  }
  held_.Clear();
  return arrow::Status::OK();
}

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> RepartitionSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  const int64_t n = morsel->num_rows();
  if (n == 0) return std::optional<std::shared_ptr<arrow::RecordBatch>>();
  const int id_column = morsel->num_columns() - 1;
  const auto& ids = static_cast<const arrow::Int32Array&>(*morsel->column(id_column));
  ARROW_ASSIGN_OR_RAISE(auto rows, morsel->RemoveColumn(id_column));
  // Rows arrive grouped by partition (PartitionIdOperator): each run is one zero-copy slice.
  int64_t start = 0;
  while (start < n) {
    const int32_t p = ids.Value(start);
    int64_t end = start + 1;
    while (end < n && ids.Value(end) == p) ++end;
    ARROW_RETURN_NOT_OK(Add(p, rows->Slice(start, end - start)));
    start = end;
  }
  if (spilled_.empty()) {
    held_.Charge(memory_, memory_tracker_);
    if (held_.bytes() > memory_->budget() / 2) ARROW_RETURN_NOT_OK(SpillAll());
  }
  return std::optional<std::shared_ptr<arrow::RecordBatch>>();
}

arrow::Status RepartitionSink::ProduceOutput(const Source::Emit& emit) {
  if (!spilled_.empty()) {
    for (auto& file : spilled_) ARROW_RETURN_NOT_OK(file->FinishWriting());
  }
  int64_t row = 0;
  for (int64_t p = 0; p < num_partitions_; ++p) {
    std::vector<std::shared_ptr<arrow::RecordBatch>> pieces = std::move(buckets_[p]);
    buckets_[p].clear();
    if (!spilled_.empty()) {
      for (int64_t i = 0; i < spilled_[p]->num_batches(); ++i) {
        ARROW_ASSIGN_OR_RAISE(auto batch, spilled_[p]->ReadBatch(i));
        pieces.push_back(std::move(batch));
      }
      spilled_[p].reset();  // its file goes once read
    }
    ARROW_ASSIGN_OR_RAISE(auto batches, CoalesceBatches(pieces, morsel_rows_));
    pieces.clear();
    if (batches.empty()) {
      ARROW_ASSIGN_OR_RAISE(auto empty, arrow::RecordBatch::MakeEmpty(schema_));
      ARROW_RETURN_NOT_OK(emit(std::move(empty), row, nullptr, p));
      continue;
    }
    for (auto& batch : batches) {
      const int64_t n = batch->num_rows();
      ARROW_RETURN_NOT_OK(emit(std::move(batch), row, nullptr, p));
      row += n;
    }
  }
  held_.Clear();
  return arrow::Status::OK();
}

arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> CoalesceBatches(
    const std::vector<std::shared_ptr<arrow::RecordBatch>>& pieces, int64_t max_rows) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> out;
  std::vector<std::shared_ptr<arrow::RecordBatch>> group;
  int64_t rows = 0;
  auto flush = [&]() -> arrow::Status {
    if (group.empty()) return arrow::Status::OK();
    if (group.size() == 1) {
      out.push_back(std::move(group[0]));
    } else {
      ARROW_ASSIGN_OR_RAISE(auto batch, arrow::ConcatenateRecordBatches(group));
      out.push_back(std::move(batch));
    }
    group.clear();
    rows = 0;
    return arrow::Status::OK();
  };
  for (const auto& piece : pieces) {
    for (int64_t start = 0; start < piece->num_rows();) {
      const int64_t take = std::min(piece->num_rows() - start, max_rows - rows);
      group.push_back(take == piece->num_rows() ? piece : piece->Slice(start, take));
      rows += take;
      start += take;
      if (rows >= max_rows) ARROW_RETURN_NOT_OK(flush());
    }
  }
  ARROW_RETURN_NOT_OK(flush());
  return out;
}

}  // namespace ketch
