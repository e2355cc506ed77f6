#pragma once

#include <arrow/api.h>

#include <functional>
#include <memory>
#include <vector>

#include "ketch/exec/operator.h"
#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// A sorted run read batch by batch (an in-memory list of batches or a spill file).
using RunReader = std::function<arrow::Result<std::shared_ptr<arrow::RecordBatch>>()>;  // nullptr at end

/// True when every sort key has a type the merge can compare (integers, floats, booleans,
/// strings, binaries, dates and timestamps; extension types by their storage).
bool CanMergeSortKeys(const SortSpec& spec, const arrow::Schema& schema);

/// K-way merge of sorted runs with a binary heap (the classic external-sort merge, Knuth TAOCP
/// vol. 3, 5.4.1). Keys compare per SortSpec (direction, null placement; NaN next to the nulls as
/// in Arrow's sort); ties go to the earlier run, so merging runs in input order is stable. Emits
/// batches of `morsel_rows` rows gathered with `take`.
arrow::Status MergeSortedRuns(const SortSpec& spec, const std::shared_ptr<arrow::Schema>& schema,
                              std::vector<RunReader> runs, int64_t morsel_rows, const Source::Emit& emit);

/// Sorts each morsel on its own (Arrow sort_indices + take), on the compute pool: the parallel
/// run-generation half of the sort; SortSink merges the runs.
class SortRunOperator : public IntermediateOperator {
 public:
  SortRunOperator(SortSpec spec, arrow::internal::Executor* compute)
      : spec_(std::move(spec)), executor_(compute) {}
  std::string name() const override { return "SortRuns"; }
  arrow::internal::Executor* executor() const override { return executor_; }
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Execute(
      const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const override;

 private:
  SortSpec spec_;
  arrow::internal::Executor* executor_;
};

/// Arrow sort options for a SortSpec.
arrow::compute::SortOptions ToSortOptions(const SortSpec& spec);

/// Arrow's stable sort_indices (uint64) of `rows` (a record batch or a table) in the order of
/// `spec`, with extension-typed keys sorted as their storage (key_storage.h: UUIDs by their
/// bytes). Every sort of rows by a SortSpec goes through here.
arrow::Result<std::shared_ptr<arrow::Array>> SortIndicesBy(const arrow::Datum& rows, const SortSpec& spec);

}  // namespace ketch
