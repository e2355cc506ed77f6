#include "ketch/exec/intermediate/project.h"

#include <arrow/compute/api.h>

#include "ketch/exec/filter_rows.h"
#include "ketch/expr/expr_analysis.h"
#include "ketch/expr/udf_stream.h"

namespace ketch {

arrow::Result<std::unique_ptr<ProjectOperator>> ProjectOperator::Make(
    std::vector<ExprPtr> exprs, std::shared_ptr<arrow::Schema> output_schema,
    arrow::internal::Executor* compute_pool, int32_t own_threads) {
  auto op = std::unique_ptr<ProjectOperator>(new ProjectOperator());
  op->exprs_ = std::move(exprs);
  op->output_schema_ = std::move(output_schema);
  int generators = 0;
  for (size_t i = 0; i < op->exprs_.size(); ++i) {
    const Expr* expr = Unaliased(*op->exprs_[i]);
    if (expr->kind() == ExprKind::kUdf && expr->udf_properties().generator) {
      ++generators;
      op->generator_ = static_cast<int>(i);
    }
  }
  // A generator that cannot be pulled lazily (in a worker process, under timeout_s) is called
  // whole, like any UDF.
  if (generators != 1) {
    op->generator_ = -1;
  } else {
    const auto* streaming = AsStreaming(Unaliased(*op->exprs_[op->generator_])->udf());
    if (streaming == nullptr || !streaming->CanStream()) op->generator_ = -1;
  }
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

namespace {

// The rows [first, first + n) of a morsel described by `whole`.
EvalContext SliceRows(const EvalContext& whole, int64_t first, int64_t n) {
  EvalContext rows = whole;
  rows.num_rows = n;
  if (whole.source_rows) {
    rows.source_rows = std::static_pointer_cast<arrow::Int64Array>(whole.source_rows->Slice(first, n));
  } else {
    rows.row_offset = whole.row_offset + first;
  }
  return rows;
}

}  // namespace

const Expr* ProjectOperator::Unaliased(const Expr& expr) {
  const Expr* e = &expr;
  while (e->kind() == ExprKind::kAlias) e = e->children()[0].get();
  return e;
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> ProjectOperator::ExecuteStream(
    const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx, int64_t max_rows, int64_t max_bytes,
    const EmitPiece& emit) const {
  const int64_t n = morsel->num_rows();
  if (generator_ < 0 || n == 0) return Execute(morsel, ctx);
  const Expr& gen = *Unaliased(*exprs_[generator_]);
  std::vector<std::shared_ptr<arrow::Array>> args;
  for (const auto& child : gen.children()) {
    ARROW_ASSIGN_OR_RAISE(auto arg, Evaluate(*child, *morsel, *ctx));
    args.push_back(std::move(arg));
  }
  const UdfCall call{ctx->cancelled, gen.udf_properties().max_items_per_row};
  const int64_t step = gen.udf_properties().batch_size > 0 ? gen.udf_properties().batch_size : n;
  // The other columns once for the morsel; each piece takes a slice of them.
  arrow::ArrayVector columns(exprs_.size());
  for (size_t i = 0; i < exprs_.size(); ++i) {
    if (static_cast<int>(i) == generator_) continue;
    ARROW_ASSIGN_OR_RAISE(columns[i], Evaluate(*exprs_[i], *morsel, *ctx));
  }
  const EvalContext whole = *ctx;
  std::shared_ptr<arrow::RecordBatch> held;  // the latest piece: sent on once another follows
  EvalContext held_rows;
  for (int64_t start = 0; start < n; start += step) {
    const int64_t len = std::min(step, n - start);
    std::vector<std::shared_ptr<arrow::Array>> slice;
    for (const auto& arg : args) slice.push_back(arg->Slice(start, len));
    ARROW_ASSIGN_OR_RAISE(auto stream, AsStreaming(gen.udf())->Start(slice, len, call));
    if (!stream) return arrow::Status::Invalid("UDF '", gen.name(), "' stopped supporting lazy generators");
    while (true) {
      auto next = stream->Next(std::max<int64_t>(1, max_rows), std::max<int64_t>(1, max_bytes));
      if (!next.ok()) {
        const int64_t first = whole.SourceRow(start), last = whole.SourceRow(start + len - 1);
        return next.status().WithMessage(next.status().message(), " (call on source rows ", first,
                                         first == last ? "" : "..", first == last ? "" : std::to_string(last),
                                         ")");
      }
      UdfChunk chunk = *std::move(next);
      const int64_t rows = chunk.lists ? chunk.lists->length() : 0;
      if (rows < 0 || chunk.first_row < 0 || chunk.first_row + rows > len) {
        return arrow::Status::Invalid("UDF '", gen.name(), "' returned items for rows beyond its batch of ",
                                      len);
      }
      if (rows > 0) {
        auto lists = chunk.lists;
        if (!lists->type()->Equals(*gen.type())) {
          ARROW_ASSIGN_OR_RAISE(lists, arrow::compute::Cast(*lists, gen.type()));
        }
        const int64_t first = start + chunk.first_row;
        arrow::ArrayVector piece_columns;
        for (size_t i = 0; i < exprs_.size(); ++i) {
          piece_columns.push_back(static_cast<int>(i) == generator_ ? lists : columns[i]->Slice(first, rows));
        }
        if (held) ARROW_RETURN_NOT_OK(emit(std::move(held), held_rows));
        held = arrow::RecordBatch::Make(output_schema_, rows, std::move(piece_columns));
        held_rows = SliceRows(whole, first, rows);
      }
      if (chunk.done) break;
    }
  }
  if (!held) {  // no row yielded anything: an empty piece carries the schema on
    arrow::ArrayVector empty;
    for (const auto& field : output_schema_->fields()) {
      ARROW_ASSIGN_OR_RAISE(auto array, arrow::MakeEmptyArray(field->type()));
      empty.push_back(std::move(array));
    }
    held = arrow::RecordBatch::Make(output_schema_, 0, std::move(empty));
    held_rows = SliceRows(whole, 0, 0);
  }
  *ctx = held_rows;
  return held;
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
