#include "ketch/exec/blocking/top_n.h"

#include <arrow/compute/api.h>

#include <algorithm>

#include "ketch/exec/blocking/sort_merge.h"

namespace ketch {

namespace cp = arrow::compute;

namespace {

// The first `keep` rows of `batch` in the sort order of `spec` (stable).
arrow::Result<std::shared_ptr<arrow::RecordBatch>> FirstRows(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                             const SortSpec& spec, int64_t keep) {
  ARROW_ASSIGN_OR_RAISE(auto indices, SortIndicesBy(arrow::Datum(batch), spec));
  if (indices->length() > keep) indices = indices->Slice(0, keep);
  ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(arrow::Datum(batch), arrow::Datum(indices)));
  return taken.record_batch();
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::RecordBatch>> TopNRunOperator::Execute(
    const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const {
  ctx->source_rows = nullptr;  // rows are reordered: errors past here cannot name source rows
  if (morsel->num_rows() == 0) return morsel;
  return FirstRows(morsel, spec_, keep_);
}

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> TopNSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  if (morsel->num_rows() > 0 && keep() > 0) {
    pending_rows_ += morsel->num_rows();
    held_.Add(memory_, BatchBytes(*morsel), memory_tracker_);
    pending_.push_back(std::move(morsel));
    if (pending_rows_ >= std::max(keep(), morsel_rows_)) ARROW_RETURN_NOT_OK(Compact());
  }
  return std::optional<std::shared_ptr<arrow::RecordBatch>>();
}

arrow::Status TopNSink::Compact() {
  if (pending_.empty()) return arrow::Status::OK();
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  if (kept_) batches.push_back(kept_);  // earlier input first: ties keep input order
  batches.insert(batches.end(), pending_.begin(), pending_.end());
  ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(schema_, batches));
  ARROW_ASSIGN_OR_RAISE(auto combined, table->CombineChunksToBatch());
  ARROW_ASSIGN_OR_RAISE(kept_, FirstRows(combined, spec_, keep()));
  pending_.clear();
  pending_rows_ = 0;
  held_.Set(memory_, BatchBytes(*kept_), memory_tracker_);
  return arrow::Status::OK();
}

arrow::Status TopNSink::ProduceOutput(const Source::Emit& emit) {
  ARROW_RETURN_NOT_OK(Compact());
  std::shared_ptr<arrow::RecordBatch> out;  // null: no rows
  if (kept_ && kept_->num_rows() > offset_) {
    out = kept_->Slice(offset_, std::min(limit_, kept_->num_rows() - offset_));
  }
  kept_.reset();
  ARROW_RETURN_NOT_OK(EmitBatch(schema_, std::move(out), morsel_rows_, emit));
  held_.Clear();
  return arrow::Status::OK();
}

}  // namespace ketch
