#pragma once

#include <arrow/compute/row/grouper.h>

#include <atomic>

#include "ketch/common/memory_manager.h"
#include "ketch/exec/morsel.h"
#include "ketch/io/spill_file.h"
#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// Two-phase hash aggregation.
///
/// Phase 1 (`AggregatePartialOperator`, an intermediate operator with many workers): each morsel is
/// grouped on its own into partial states per group (sum, count, sum of squares, min, max, one value,
/// value lists, distinct lists). Phase 2 (`AggregateFinalSink`, a blocking sink): the partial
/// states of all morsels are grouped again and merged (sum of sums, min of mins, concatenated
/// lists, ...), then finished (mean = sum / count). Grouping uses Arrow's hash aggregate kernels (hash_sum,
/// hash_count, hash_min, hash_max, hash_one, hash_list) run through Acero's aggregate node as a
/// kernel library; exact distinct counts are computed with Arrow's Grouper. Aggregations that
/// collect values (agg_list, agg_concat, approx_count_distinct) cannot merge partial lists with
/// Arrow's kernels, and stddev is only numerically stable over the raw values (Arrow's
/// hash_stddev), so a query that has one of these (or approx_percentiles / percentile) runs in a
/// single phase (morsels pass through). product, bool_and/or, var, skew, count_distinct and set
/// merge: more_aggregates.h and aggregate_state_merge.h. Float keys group by IEEE equality (-0.0 == 0.0).
/// With no group keys the result has exactly one row, also for empty input; both phases then
/// reduce with Arrow's scalar aggregate kernels instead of hashing a constant key
/// (GlobalAggregate), and fall back to the hash kernels for input types those do not take.
///
/// Partial phase of an aggregation split across partitions (AggregatePhase::kPartial): morsels'
/// states come out in the partial-state schema. Once kProbeRows input rows were grouped and they
/// made more than kSkipRatio groups per row, grouping does not pay (high-cardinality keys): later
/// morsels become one state row per input row without hashing, `skip` is set and the sink then
/// concatenates the states instead of merging them (the final phase merges rows of one group
/// anyway); like DataFusion's skip_partial_aggregation probe.
class AggregatePartialOperator : public IntermediateOperator {
 public:
  static constexpr int64_t kProbeRows = 100'000;
  static constexpr double kSkipRatio = 0.8;

  AggregatePartialOperator(AggregateSpec spec, std::shared_ptr<arrow::Schema> input_schema,
                           arrow::internal::Executor* compute,
                           std::shared_ptr<std::atomic<bool>> skip = nullptr)
      : spec_(std::move(spec)),
        input_schema_(std::move(input_schema)),
        executor_(compute),
        skip_(std::move(skip)) {}
  std::string name() const override { return "AggregatePartial"; }
  arrow::internal::Executor* executor() const override { return executor_; }
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Execute(
      const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const override;

 private:
  AggregateSpec spec_;
  std::shared_ptr<arrow::Schema> input_schema_;
  arrow::internal::Executor* executor_;
  std::shared_ptr<std::atomic<bool>> skip_;  // partial phase only: grouping skipped
  mutable std::atomic<int64_t> probe_rows_{0};
  mutable std::atomic<int64_t> probe_groups_{0};
  mutable std::atomic<bool> no_reduction_{false};  // no group keys, yet GlobalAggregate cannot
};

/// `finish` = false (the partial phase of an aggregation split across partitions,
/// AggregatePhase::kPartial): the merged partial states are the output, in the partial-state
/// schema (`output_schema`, PartialAggregateSchema), not finished. For the final phase
/// (AggregatePhase::kFinal) the sink takes partial states directly (no partial operator before
/// it); `input_schema` is then the partial phase's input schema.
/// Memory: partial states are charged to the query's MemoryManager; past half of the budget the
/// sink switches to spilling (grace hash aggregation): each partial batch is split into
/// kSpillPartitions by a hash of its keys (RowHashes, remixed so that the buckets of an upstream
/// hash shuffle by the same keys still spread; no state per key, so spilling holds no memory per
/// group) and appended to that partition's IPC file; the output then merges one partition at a
/// time.
class AggregateFinalSink : public BlockingSink {
 public:
  static constexpr int kSpillPartitions = 16;

  AggregateFinalSink(AggregateSpec spec, std::shared_ptr<arrow::Schema> input_schema,
                     std::shared_ptr<arrow::Schema> output_schema, int64_t morsel_rows, MemoryManager* memory,
                     std::string spill_dir, bool finish = true,
                     std::shared_ptr<std::atomic<bool>> skip_merge = nullptr)
      : spec_(std::move(spec)),
        input_schema_(std::move(input_schema)),
        output_schema_(std::move(output_schema)),
        morsel_rows_(morsel_rows),
        memory_(memory),
        spill_dir_(std::move(spill_dir)),
        finish_(finish),
        skip_merge_(std::move(skip_merge)) {}
  std::string name() const override { return finish_ ? "AggregateFinal" : "AggregateMergePartial"; }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;
  arrow::Status ProduceOutput(const Source::Emit& emit) override;
  void NoteNextPosition(int64_t seq, int64_t sub) override { next_position_ = {seq, sub}; }

  bool spilled() const { return !partitions_.empty(); }

 private:
  arrow::Result<std::shared_ptr<arrow::Table>> Merge(
      std::vector<std::shared_ptr<arrow::RecordBatch>> partials);
  arrow::Status StartSpilling();
  /// Takes the held partials, sorted by stream position (leaves none held).
  std::vector<std::shared_ptr<arrow::RecordBatch>> InStreamOrder();
  arrow::Status SpillBatch(const std::shared_ptr<arrow::RecordBatch>& batch);

  AggregateSpec spec_;
  std::shared_ptr<arrow::Schema> input_schema_;
  std::shared_ptr<arrow::Schema> output_schema_;
  int64_t morsel_rows_;
  MemoryManager* memory_;
  std::string spill_dir_;
  bool finish_ = true;
  std::shared_ptr<std::atomic<bool>> skip_merge_;  // set: concatenate partial states, no merge
  std::vector<std::shared_ptr<arrow::RecordBatch>> partials_;
  /// Each partial's stream position: merged in that order, so float sums (and list
  /// aggregations) give the same result on every run whatever order the workers finish in.
  /// A spilled aggregation merges each partition in arrival order.
  std::vector<std::pair<int64_t, int64_t>> positions_;
  std::pair<int64_t, int64_t> next_position_{0, 0};
  HeldBytes held_;  ///< the morsels kept, charged to memory_
  std::vector<std::unique_ptr<SpillFile>> partitions_;
};

}  // namespace ketch
