#include "ketch/exec/intermediate/project.h"

#include <arrow/compute/api.h>

namespace ketch {

arrow::Result<std::unique_ptr<ProjectOperator>> ProjectOperator::Make(
    std::vector<ExprPtr> exprs, std::shared_ptr<arrow::Schema> output_schema,
    arrow::internal::Executor* compute_pool, int32_t own_threads) {
  auto op = std::unique_ptr<ProjectOperator>(new ProjectOperator());
  op->exprs_ = std::move(exprs);
  op->output_schema_ = std::move(output_schema);
  op->executor_ = compute_pool;
  if (own_threads > 0) {
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
  ARROW_ASSIGN_OR_RAISE(auto mask, Evaluate(*predicate_, *morsel, *ctx));
  ARROW_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(morsel, mask));
  // Keep track of which source rows survive, so later errors name them.
  std::shared_ptr<arrow::Array> ids = ctx->source_rows;
  if (!ids) {
    arrow::Int64Builder builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(morsel->num_rows()));
    for (int64_t i = 0; i < morsel->num_rows(); ++i) builder.UnsafeAppend(ctx->row_offset + i);
    ARROW_ASSIGN_OR_RAISE(ids, builder.Finish());
  }
  ARROW_ASSIGN_OR_RAISE(auto kept, arrow::compute::Filter(ids, mask));
  ctx->source_rows = std::static_pointer_cast<arrow::Int64Array>(kept.make_array());
  return filtered.record_batch();
}

}  // namespace ketch
