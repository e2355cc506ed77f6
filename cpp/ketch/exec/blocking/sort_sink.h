#pragma once

#include "ketch/common/memory_manager.h"
#include "ketch/exec/morsel.h"
#include "ketch/io/spill_file.h"
#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// Blocking sink of a sort.
///
/// With `presorted_runs` (keys the merge can compare), a SortRunOperator before it has sorted every
/// morsel in parallel on the compute pool; the sink keeps those runs and produces its output with a
/// stable k-way heap merge (MergeSortedRuns). Past half of the memory budget the runs held are
/// merged into one run spilled to an Arrow IPC file; the output merges spilled and in-memory runs.
///
/// Otherwise it sorts all its input by Arrow's stable sort_indices (multi-key, per-key direction
/// and null placement) and take, as described below.
///
/// Memory: the morsels it keeps are charged to the query's MemoryManager. When they pass half of
/// the budget, they are sorted into a run and spilled to an Arrow IPC file. The output then merges
/// the runs chunk by chunk: take each run's current batch, sort their union, and emit the prefix up
/// to the smallest "last row" among the runs (everything after it may still be preceded by rows not
/// yet read). Only one batch per run is in memory during the merge. With spills, rows with equal
/// keys from different runs may come out in any order (not stable across runs).
class SortSink : public BlockingSink {
 public:
  SortSink(SortSpec spec, std::shared_ptr<arrow::Schema> schema, int64_t morsel_rows, MemoryManager* memory,
           std::string spill_dir, bool presorted_runs)
      : presorted_runs_(presorted_runs),
        spec_(std::move(spec)),
        schema_(std::move(schema)),
        morsel_rows_(morsel_rows),
        memory_(memory),
        spill_dir_(std::move(spill_dir)) {}
  std::string name() const override { return "Sort"; }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;
  arrow::Status ProduceOutput(const Source::Emit& emit) override;

  int64_t spilled_runs() const { return static_cast<int64_t>(runs_.size()); }

 private:
  arrow::Result<std::shared_ptr<arrow::Table>> SortTable(std::shared_ptr<arrow::Table> table) const;
  arrow::Status SpillRun();
  arrow::Status MergeRuns(const Source::Emit& emit);
  arrow::Status SpillMergedRuns();
  arrow::Status ProduceMerged(const Source::Emit& emit);

  bool presorted_runs_;
  SortSpec spec_;
  std::shared_ptr<arrow::Schema> schema_;
  int64_t morsel_rows_;
  MemoryManager* memory_;
  std::string spill_dir_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
  HeldBytes held_;  ///< the morsels kept, charged to memory_
  std::vector<std::unique_ptr<SpillFile>> runs_;
};

/// Splits a table into record batches of at most `rows` rows (zero-copy slices).
arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> TableToBatches(const arrow::Table& table,
                                                                               int64_t rows);

/// Bytes a batch references (slices count only their range).
int64_t BatchBytes(const arrow::RecordBatch& batch);

}  // namespace ketch
