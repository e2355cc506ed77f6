#include "ketch/exec/blocking/sample_size.h"

#include <arrow/compute/api.h>

#include <algorithm>
#include <new>
#include <unordered_map>

namespace ketch {

namespace cp = arrow::compute;

namespace {

arrow::Result<std::shared_ptr<arrow::RecordBatch>> TakeRows(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                            const std::vector<int64_t>& rows) {
  arrow::Int64Builder indices;
  ARROW_RETURN_NOT_OK(indices.AppendValues(rows));
  ARROW_ASSIGN_OR_RAISE(auto index_array, indices.Finish());
  ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(arrow::Datum(batch), arrow::Datum(index_array)));
  return taken.record_batch();
}

}  // namespace

arrow::Status SampleSizeSink::Draw(int32_t piece, int64_t i) {
  const int64_t t = seen_++;
  if (!with_replacement_) {
    if (t < size_) {
      slots_.push_back(Ref{piece, i});  // the slots grow with the input: no k-sized allocation up front
      return arrow::Status::OK();
    }
    const int64_t j = std::uniform_int_distribution<int64_t>(0, t)(rng_);
    if (j < size_) slots_[j] = Ref{piece, i};
    return arrow::Status::OK();
  }
  // Each slot independently keeps its row with probability t / (t + 1).
  if (t == 0) {
    try {
      slots_.assign(static_cast<size_t>(size_), Ref{piece, i});
    } catch (const std::bad_alloc&) {
      return arrow::Status::OutOfMemory("sample(size=", size_, ", with_replacement=True): no memory for ",
                                        size_, " rows");
    }
    return arrow::Status::OK();
  }
  const int64_t replaced = std::binomial_distribution<int64_t>(size_, 1.0 / static_cast<double>(t + 1))(rng_);
  if (replaced == 0) return arrow::Status::OK();
  // `replaced` distinct slots, uniformly: Robert Floyd's algorithm.
  chosen_.clear();
  for (int64_t m = size_ - replaced; m < size_; ++m) {
    const int64_t j = std::uniform_int_distribution<int64_t>(0, m)(rng_);
    chosen_.insert(chosen_.contains(j) ? m : j);
  }
  for (int64_t j : chosen_) slots_[j] = Ref{piece, i};
  return arrow::Status::OK();
}

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> SampleSizeSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  if (size_ == 0 || morsel->num_rows() == 0) return std::optional<std::shared_ptr<arrow::RecordBatch>>();
  const auto piece = static_cast<int32_t>(pieces_.size());
  for (int64_t i = 0; i < morsel->num_rows(); ++i) ARROW_RETURN_NOT_OK(Draw(piece, i));
  // Keep only the morsel's rows some slot still refers to.
  std::vector<int64_t> rows;
  for (const Ref& ref : slots_) {
    if (ref.piece == piece) rows.push_back(ref.row);
  }
  if (rows.empty()) return std::optional<std::shared_ptr<arrow::RecordBatch>>();
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  std::unordered_map<int64_t, int64_t> position;
  for (size_t k = 0; k < rows.size(); ++k) position[rows[k]] = static_cast<int64_t>(k);
  for (Ref& ref : slots_) {
    if (ref.piece == piece) ref.row = position[ref.row];
  }
  ARROW_ASSIGN_OR_RAISE(auto selected, TakeRows(morsel, rows));
  held_.Add(memory_, BatchBytes(*selected), memory_tracker_);
  piece_rows_ += selected->num_rows();
  pieces_.push_back(std::move(selected));
  if (piece_rows_ >= std::max(size_, morsel_rows_)) ARROW_RETURN_NOT_OK(Compact());
  return std::optional<std::shared_ptr<arrow::RecordBatch>>();
}

arrow::Status SampleSizeSink::Compact() {
  if (pieces_.empty()) return arrow::Status::OK();
  // One batch of kept_ followed by the pieces; a slot's row is at its piece's start + row.
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  std::vector<int64_t> starts;
  int64_t offset = 0;
  if (kept_) {
    batches.push_back(kept_);
    offset = kept_->num_rows();
  }
  for (const auto& piece : pieces_) {
    starts.push_back(offset);
    offset += piece->num_rows();
    batches.push_back(piece);
  }
  ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(schema_, batches));
  ARROW_ASSIGN_OR_RAISE(auto combined, table->CombineChunksToBatch());
  const auto filled = static_cast<int64_t>(slots_.size());
  std::vector<int64_t> rows(static_cast<size_t>(filled));
  for (int64_t s = 0; s < filled; ++s) {
    const Ref& ref = slots_[s];
    rows[s] = ref.piece < 0 ? ref.row : starts[ref.piece] + ref.row;
  }
  ARROW_ASSIGN_OR_RAISE(kept_, TakeRows(combined, rows));
  for (int64_t s = 0; s < filled; ++s) slots_[s] = Ref{-1, s};
  pieces_.clear();
  piece_rows_ = 0;
  held_.Set(memory_, BatchBytes(*kept_), memory_tracker_);
  return arrow::Status::OK();
}

arrow::Status SampleSizeSink::ProduceOutput(const Source::Emit& emit) {
  if (!with_replacement_ && seen_ < size_) {
    return arrow::Status::Invalid("Cannot take a sample larger than the population when 'replace=False' (",
                                  size_, " rows asked, the input has ", seen_, ")");
  }
  ARROW_RETURN_NOT_OK(Compact());
  ARROW_RETURN_NOT_OK(EmitBatch(schema_, std::move(kept_), morsel_rows_, emit));
  kept_.reset();
  held_.Clear();
  return arrow::Status::OK();
}

}  // namespace ketch
