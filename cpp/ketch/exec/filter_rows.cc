#include "ketch/exec/filter_rows.h"

#include <arrow/compute/api.h>

#include <set>

namespace ketch {
namespace {

// The batch's columns that `expr` reads (a zero-copy view), at `positions` when given.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> ColumnsAt(const Expr& expr, const arrow::RecordBatch& batch,
                                                             const std::shared_ptr<arrow::Int64Array>& positions) {
  std::set<std::string> used;
  expr.CollectColumns(&used);
  arrow::FieldVector fields;
  arrow::ArrayVector columns;
  for (int i = 0; i < batch.num_columns(); ++i) {
    if (!used.count(batch.schema()->field(i)->name())) continue;
    fields.push_back(batch.schema()->field(i));
    columns.push_back(batch.column(i));
  }
  auto view = arrow::RecordBatch::Make(arrow::schema(fields), batch.num_rows(), columns);
  if (!positions) return view;
  if (view->num_columns() == 0) {
    return arrow::RecordBatch::Make(view->schema(), positions->length(), arrow::ArrayVector{});
  }
  ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(view, positions));
  return taken.record_batch();
}

arrow::Result<std::shared_ptr<arrow::Int64Array>> SourceRowsAt(const EvalContext& ctx,
                                                               const std::shared_ptr<arrow::Int64Array>& positions,
                                                               int64_t num_rows) {
  arrow::Int64Builder rows;
  const int64_t n = positions ? positions->length() : num_rows;
  ARROW_RETURN_NOT_OK(rows.Reserve(n));
  for (int64_t i = 0; i < n; ++i) rows.UnsafeAppend(ctx.SourceRow(positions ? positions->Value(i) : i));
  std::shared_ptr<arrow::Array> out;
  ARROW_RETURN_NOT_OK(rows.Finish(&out));
  return std::static_pointer_cast<arrow::Int64Array>(out);
}

}  // namespace

arrow::Result<FilteredRows> FilterRows(const std::vector<ExprPtr>& conjuncts,
                                       const std::shared_ptr<arrow::RecordBatch>& batch, const EvalContext& ctx) {
  const int64_t n = batch->num_rows();
  std::shared_ptr<arrow::Int64Array> positions;  // rows kept so far; null = all
  for (const auto& conjunct : conjuncts) {
    const int64_t rows = positions ? positions->length() : n;
    if (rows == 0) break;
    ARROW_ASSIGN_OR_RAISE(auto view, ColumnsAt(*conjunct, *batch, positions));
    EvalContext step = ctx;
    step.num_rows = rows;
    if (positions) {
      ARROW_ASSIGN_OR_RAISE(step.source_rows, SourceRowsAt(ctx, positions, n));
    }
    ARROW_ASSIGN_OR_RAISE(auto mask, Evaluate(*conjunct, *view, step));
    const auto& bools = static_cast<const arrow::BooleanArray&>(*mask);
    if (bools.null_count() == 0 && bools.true_count() == rows) continue;  // keeps every row
    std::shared_ptr<arrow::Array> current = positions;
    if (!current) {
      arrow::Int64Builder all;
      ARROW_RETURN_NOT_OK(all.Reserve(n));
      for (int64_t i = 0; i < n; ++i) all.UnsafeAppend(i);
      ARROW_ASSIGN_OR_RAISE(current, all.Finish());
    }
    ARROW_ASSIGN_OR_RAISE(auto kept, arrow::compute::Filter(current, mask));
    positions = std::static_pointer_cast<arrow::Int64Array>(kept.make_array());
  }
  FilteredRows out;
  if (!positions) {
    out.batch = batch;
  } else {
    ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(batch, positions));
    out.batch = taken.record_batch();
  }
  ARROW_ASSIGN_OR_RAISE(out.source_rows, SourceRowsAt(ctx, positions, n));
  return out;
}

}  // namespace ketch
