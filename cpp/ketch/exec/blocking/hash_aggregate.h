#pragma once

#include "ketch/exec/operator.h"
#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// Two-phase hash aggregation.
///
/// Phase 1 (`AggregatePartialOperator`, an intermediate operator with many workers): each morsel is
/// grouped on its own into partial states per group (sum, count, sum of squares, min, max, one value,
/// value lists, distinct lists). Phase 2 (`AggregateFinalSink`, a blocking sink): the partial
/// states of all morsels are grouped again and merged (sum of sums, min of mins, concatenated
/// lists, ...), then finished (mean = sum / count; stddev = sqrt(sumsq / n - mean^2), the
/// population standard deviation). Grouping uses Arrow's hash aggregate kernels (hash_sum,
/// hash_count, hash_min, hash_max, hash_one, hash_list) run through Acero's aggregate node as a
/// kernel library; exact distinct counts are computed with Arrow's Grouper. Aggregations that
/// collect values (agg_list, agg_concat, approx_count_distinct) cannot merge partial lists with
/// Arrow's kernels, so a query that has one runs in a single phase (morsels pass through).
/// With no group keys the result has exactly one row, also for empty input.
class AggregatePartialOperator : public IntermediateOperator {
 public:
  AggregatePartialOperator(AggregateSpec spec, std::shared_ptr<arrow::Schema> input_schema,
                           arrow::internal::Executor* compute)
      : spec_(std::move(spec)), input_schema_(std::move(input_schema)), executor_(compute) {}
  std::string name() const override { return "AggregatePartial"; }
  arrow::internal::Executor* executor() const override { return executor_; }
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Execute(const std::shared_ptr<arrow::RecordBatch>& morsel,
                                                             EvalContext* ctx) const override;

 private:
  AggregateSpec spec_;
  std::shared_ptr<arrow::Schema> input_schema_;
  arrow::internal::Executor* executor_;
};

class AggregateFinalSink : public StreamingSink {
 public:
  AggregateFinalSink(AggregateSpec spec, std::shared_ptr<arrow::Schema> input_schema,
                     std::shared_ptr<arrow::Schema> output_schema, int64_t morsel_rows)
      : spec_(std::move(spec)),
        input_schema_(std::move(input_schema)),
        output_schema_(std::move(output_schema)),
        morsel_rows_(morsel_rows) {}
  std::string name() const override { return "AggregateFinal"; }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;
  arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> Finalize() override;

 private:
  AggregateSpec spec_;
  std::shared_ptr<arrow::Schema> input_schema_;
  std::shared_ptr<arrow::Schema> output_schema_;
  int64_t morsel_rows_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> partials_;
};

}  // namespace ketch
