#include "ketch/exec/intermediate/project.h"

#include <arrow/compute/api.h>

#include "ketch/exec/filter_rows.h"
#include "ketch/expr/expr_analysis.h"

namespace ketch {

arrow::Result<std::unique_ptr<ProjectOperator>> ProjectOperator::Make(
    std::vector<ExprPtr> exprs, std::shared_ptr<arrow::Schema> output_schema,
    arrow::internal::Executor* compute_pool, int32_t own_threads) {
  auto op = std::unique_ptr<ProjectOperator>(new ProjectOperator());
  op->exprs_ = std::move(exprs);
  op->output_schema_ = std::move(output_schema);
  op->executor_ = compute_pool;
  if (own_threads > 0) {
    op->own_threads_ = own_threads;
    ARROW_ASSIGN_OR_RAISE(op->own_pool_, arrow::internal::ThreadPool::Make(own_threads));
    op->executor_ = op->own_pool_.get();
  }
  return op;
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> ProjectOperator::Execute(
    const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const {
  arrow::ArrayVector columns;
  columns.reserve(exprs_.size());
  for (const auto& expr : exprs_) {
    ARROW_ASSIGN_OR_RAISE(auto column, Evaluate(*expr, *morsel, *ctx));
    columns.push_back(std::move(column));
  }
  return arrow::RecordBatch::Make(output_schema_, morsel->num_rows(), std::move(columns));
}

// The filter lives beside the projection: both are stateless expression operators.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> FilterOperator::Execute(
    const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const {
  ARROW_ASSIGN_OR_RAISE(auto kept, FilterRows(conjuncts_, morsel, *ctx));
  // Keep track of which source rows survive, so later errors name them.
  ctx->source_rows = std::move(kept.source_rows);
  return kept.batch;
}

}  // namespace ketch
