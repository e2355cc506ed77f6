#pragma once

#include <arrow/api.h>

#include <memory>
#include <string>

#include "ketch/exec/operator.h"

namespace ketch {

/// The rows a cross join pairs with every streamed row: one side of the join, materialized
/// (collected) once, as one contiguous batch.
struct CrossJoinSide {
  std::shared_ptr<arrow::RecordBatch> rows;
  bool is_left = false;  ///< the materialized side is the join's left input
};

/// Cartesian product (`how="cross"`): each morsel of the streamed input (the larger side,
/// estimated) is paired with every row of the materialized smaller side. A morsel of n rows
/// against m materialized rows gives n * m rows: each streamed row in turn, with all m rows.
/// Output columns: the left input's, then the right input's, named by `output_schema` (clashing
/// right names already carry the join's prefix/suffix). The executor bounds the streamed morsels
/// to about morsel_size / m rows, so one output morsel holds about morsel_size rows (at least m).
class CrossJoinOperator : public IntermediateOperator {
 public:
  CrossJoinOperator(CrossJoinSide materialized, std::shared_ptr<arrow::Schema> output_schema,
                    arrow::internal::Executor* compute)
      : materialized_(std::move(materialized)),
        output_schema_(std::move(output_schema)),
        executor_(compute) {}
  std::string name() const override { return "CrossJoin"; }
  arrow::internal::Executor* executor() const override { return executor_; }
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Execute(
      const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const override;

 private:
  CrossJoinSide materialized_;
  std::shared_ptr<arrow::Schema> output_schema_;
  arrow::internal::Executor* executor_;
};

/// Streamed morsel rows for a cross join whose materialized side has `materialized_rows` rows,
/// so that one output morsel has about `morsel_rows` rows: morsel_rows / materialized_rows,
/// at least 1.
int64_t CrossJoinStreamRows(int64_t morsel_rows, int64_t materialized_rows);

}  // namespace ketch
