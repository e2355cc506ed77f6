#include "ketch/exec/blocking/cross_join.h"

#include <arrow/compute/api.h>

#include <algorithm>

namespace ketch {
namespace {

namespace cp = arrow::compute;

// Row indices of an n x m product, streamed row major: repeat[i * m + j] = i, tile[i * m + j] = j.
arrow::Status ProductIndices(int64_t n, int64_t m, std::shared_ptr<arrow::Array>* repeat,
                             std::shared_ptr<arrow::Array>* tile) {
  arrow::Int64Builder r, t;
  ARROW_RETURN_NOT_OK(r.Reserve(n * m));
  ARROW_RETURN_NOT_OK(t.Reserve(n * m));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      r.UnsafeAppend(i);
      t.UnsafeAppend(j);
    }
  }
  ARROW_RETURN_NOT_OK(r.Finish(repeat));
  return t.Finish(tile);
}

}  // namespace

int64_t CrossJoinStreamRows(int64_t morsel_rows, int64_t materialized_rows) {
  if (materialized_rows <= 1) return std::max<int64_t>(1, morsel_rows);
  return std::max<int64_t>(1, morsel_rows / materialized_rows);
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> CrossJoinOperator::Execute(
    const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const {
  const auto& other = materialized_.rows;
  const int64_t n = morsel->num_rows();
  const int64_t m = other->num_rows();
  std::shared_ptr<arrow::Array> repeat, tile;
  ARROW_RETURN_NOT_OK(ProductIndices(n, m, &repeat, &tile));
  ARROW_ASSIGN_OR_RAISE(auto streamed, cp::Take(morsel, repeat));
  ARROW_ASSIGN_OR_RAISE(auto paired, cp::Take(other, tile));
  const auto& streamed_batch = streamed.record_batch();
  const auto& paired_batch = paired.record_batch();
  const auto& left = materialized_.is_left ? paired_batch : streamed_batch;
  const auto& right = materialized_.is_left ? streamed_batch : paired_batch;
  arrow::ArrayVector columns = left->columns();
  for (const auto& column : right->columns()) columns.push_back(column);
  if (static_cast<int>(columns.size()) != output_schema_->num_fields()) {
    return arrow::Status::Invalid("cross join: ", columns.size(), " columns for an output schema of ",
                                  output_schema_->num_fields());
  }
  // Each output row comes from one streamed row: its source row follows along (errors name it).
  arrow::Int64Builder rows;
  ARROW_RETURN_NOT_OK(rows.Reserve(n * m));
  const auto& repeat_values = static_cast<const arrow::Int64Array&>(*repeat);
  for (int64_t k = 0; k < n * m; ++k) rows.UnsafeAppend(ctx->SourceRow(repeat_values.Value(k)));
  std::shared_ptr<arrow::Array> source_rows;
  ARROW_RETURN_NOT_OK(rows.Finish(&source_rows));
  ctx->source_rows = std::static_pointer_cast<arrow::Int64Array>(source_rows);
  return arrow::RecordBatch::Make(output_schema_, n * m, std::move(columns));
}

}  // namespace ketch
