#include "ketch/exec/blocking/sort_sink.h"

#include <arrow/compute/api.h>

#include "ketch/exec/blocking/sort_merge.h"

namespace ketch {

namespace cp = arrow::compute;

arrow::Result<std::shared_ptr<arrow::Table>> SortSink::SortTable(std::shared_ptr<arrow::Table> table) const {
  ARROW_ASSIGN_OR_RAISE(auto indices, SortIndicesBy(arrow::Datum(table), spec_));
  ARROW_ASSIGN_OR_RAISE(auto sorted, cp::Take(arrow::Datum(table), arrow::Datum(indices)));
  return sorted.table();
}

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> SortSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  if (morsel->num_rows() > 0) {
    held_.Add(memory_, BatchBytes(*morsel), memory_tracker_);
    batches_.push_back(std::move(morsel));
    if (held_.bytes() > memory_->budget() / 2) {
      ARROW_RETURN_NOT_OK(presorted_runs_ ? SpillMergedRuns() : SpillRun());
    }
  }
  return std::optional<std::shared_ptr<arrow::RecordBatch>>();
}

arrow::Status SortSink::SpillRun() {
  if (batches_.empty()) return arrow::Status::OK();
  ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(schema_, std::move(batches_)));
  batches_.clear();
  ARROW_ASSIGN_OR_RAISE(auto sorted, SortTable(std::move(table)));
  ARROW_ASSIGN_OR_RAISE(auto run, SpillFile::Create(spill_dir_, schema_));
  ARROW_ASSIGN_OR_RAISE(auto chunks, TableToBatches(*sorted, morsel_rows_));
  for (const auto& chunk : chunks) ARROW_RETURN_NOT_OK(run->Write(*chunk));
  ARROW_RETURN_NOT_OK(run->FinishWriting());
  runs_.push_back(std::move(run));
  held_.Clear();
  return arrow::Status::OK();
}

arrow::Status SortSink::SpillMergedRuns() {
  std::vector<RunReader> readers;
  for (auto& batch : batches_) {
    readers.push_back([batch, done = false]() mutable -> arrow::Result<std::shared_ptr<arrow::RecordBatch>> {
      if (done) return nullptr;
      done = true;
      return batch;
    });
  }
  ARROW_ASSIGN_OR_RAISE(auto run, SpillFile::Create(spill_dir_, schema_));
  ARROW_RETURN_NOT_OK(
      MergeSortedRuns(spec_, schema_, std::move(readers), morsel_rows_,
                      [&](std::shared_ptr<arrow::RecordBatch> batch, int64_t,
                          std::shared_ptr<arrow::Int64Array>, int64_t) { return run->Write(*batch); }));
  ARROW_RETURN_NOT_OK(run->FinishWriting());
  runs_.push_back(std::move(run));
  batches_.clear();
  held_.Clear();
  return arrow::Status::OK();
}

arrow::Status SortSink::ProduceMerged(const Source::Emit& emit) {
  // Spilled runs hold earlier input than the morsels still in memory: list them first (stability).
  std::vector<RunReader> readers;
  for (auto& run : runs_) {
    readers.push_back([file = run.get(),
                       next = int64_t{0}]() mutable -> arrow::Result<std::shared_ptr<arrow::RecordBatch>> {
      if (next >= file->num_batches()) return nullptr;
      return file->ReadBatch(next++);
    });
  }
  for (auto& batch : batches_) {
    readers.push_back([batch, done = false]() mutable -> arrow::Result<std::shared_ptr<arrow::RecordBatch>> {
      if (done) return nullptr;
      done = true;
      return batch;
    });
  }
  ARROW_RETURN_NOT_OK(MergeSortedRuns(spec_, schema_, std::move(readers), morsel_rows_, emit));
  batches_.clear();
  held_.Clear();
  return arrow::Status::OK();
}

arrow::Status SortSink::ProduceOutput(const Source::Emit& emit) {
  if (presorted_runs_) return ProduceMerged(emit);
  if (runs_.empty()) {
    ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(schema_, std::move(batches_)));
    batches_.clear();
    held_.Clear();
    if (table->num_rows() == 0) return arrow::Status::OK();
    ARROW_ASSIGN_OR_RAISE(auto sorted, SortTable(std::move(table)));
    int64_t row = 0;
    return EmitTable(*sorted, morsel_rows_, &row, emit);
  }
  ARROW_RETURN_NOT_OK(SpillRun());
  return MergeRuns(emit);
}

arrow::Status SortSink::MergeRuns(const Source::Emit& emit) {
  struct Cursor {
    SpillFile* file;
    int64_t next_batch = 0;
    std::shared_ptr<arrow::RecordBatch> batch;  // rows not yet emitted
  };
  std::vector<Cursor> cursors;
  for (auto& run : runs_) cursors.push_back(Cursor{run.get(), 0, nullptr});
  auto refill = [](Cursor& c) -> arrow::Status {
    while ((!c.batch || c.batch->num_rows() == 0) && c.next_batch < c.file->num_batches()) {
      ARROW_ASSIGN_OR_RAISE(c.batch, c.file->ReadBatch(c.next_batch++));
    }
    return arrow::Status::OK();
  };
  int64_t row = 0;
  while (true) {
    std::vector<size_t> live;
    for (size_t r = 0; r < cursors.size(); ++r) {
      ARROW_RETURN_NOT_OK(refill(cursors[r]));
      if (cursors[r].batch && cursors[r].batch->num_rows() > 0) live.push_back(r);
    }
    if (live.empty()) break;
    // Union of the current batches, tagged with their run; the frontier is the last row of each
    // batch whose run still has batches on disk (a run read to its end bounds nothing).
    arrow::Int32Builder run_ids;
    std::vector<std::shared_ptr<arrow::RecordBatch>> parts;
    std::vector<int64_t> frontier_rows;  // positions in the union
    int64_t position = 0;
    for (size_t r : live) {
      const auto& batch = cursors[r].batch;
      for (int64_t i = 0; i < batch->num_rows(); ++i)
        ARROW_RETURN_NOT_OK(run_ids.Append(static_cast<int32_t>(r)));
      parts.push_back(batch);
      position += batch->num_rows();
      if (cursors[r].next_batch < cursors[r].file->num_batches()) frontier_rows.push_back(position - 1);
    }
    ARROW_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(schema_, parts));
    ARROW_ASSIGN_OR_RAISE(auto run_array, run_ids.Finish());
    ARROW_ASSIGN_OR_RAISE(auto order_array, SortIndicesBy(arrow::Datum(table), spec_));
    const auto& order = static_cast<const arrow::UInt64Array&>(*order_array);
    // Emit up to the earliest frontier row in sorted order (everything, when no run has more).
    int64_t emit_count = order.length();
    if (!frontier_rows.empty()) {
      std::vector<bool> is_frontier(table->num_rows(), false);
      for (int64_t f : frontier_rows) is_frontier[f] = true;
      for (int64_t i = 0; i < order.length(); ++i) {
        if (is_frontier[order.Value(i)]) {
          emit_count = i + 1;
          break;
        }
      }
    }
    auto prefix = order_array->Slice(0, emit_count);
    ARROW_ASSIGN_OR_RAISE(auto out, cp::Take(arrow::Datum(table), arrow::Datum(prefix)));
    // Rows taken from each run form a prefix of its batch (each run is sorted): drop them.
    std::vector<int64_t> taken(cursors.size(), 0);
    ARROW_ASSIGN_OR_RAISE(auto taken_runs, cp::Take(run_array, prefix));
    auto taken_runs_array = taken_runs.make_array();
    const auto& tr = static_cast<const arrow::Int32Array&>(*taken_runs_array);
    for (int64_t i = 0; i < tr.length(); ++i) ++taken[tr.Value(i)];
    for (size_t r : live) cursors[r].batch = cursors[r].batch->Slice(taken[r]);
    ARROW_RETURN_NOT_OK(EmitTable(*out.table(), morsel_rows_, &row, emit));
  }
  return arrow::Status::OK();
}

}  // namespace ketch
