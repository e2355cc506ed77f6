#include "ketch/exec/filter_rows.h"

#include <arrow/compute/api.h>

#include <set>

#include "ketch/expr/expr_analysis.h"

namespace ketch {
namespace {

// The batch's columns that `expr` reads (a zero-copy view), at `positions` when given.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> ColumnsAt(
    const Expr& expr, const arrow::RecordBatch& batch, const std::shared_ptr<arrow::Int64Array>& positions) {
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

arrow::Result<std::shared_ptr<arrow::Int64Array>> SourceRowsAt(
    const EvalContext& ctx, const std::shared_ptr<arrow::Int64Array>& positions, int64_t num_rows) {
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
                                       const std::shared_ptr<arrow::RecordBatch>& batch,
                                       const EvalContext& ctx) {
  const int64_t n = batch->num_rows();
  // Two modes: while every conjunct so far cannot fail, masks over all rows are combined (no
  // gathering); the first conjunct that can fail (a cast, checked arithmetic, a UDF) switches to
  // positions, so it and every later one only see the rows still kept.
  std::shared_ptr<arrow::Array> mask;            // mask mode: rows kept so far; null = all
  std::shared_ptr<arrow::Int64Array> positions;  // position mode: rows kept so far
  auto to_positions =
      [&](const std::shared_ptr<arrow::Array>& m) -> arrow::Result<std::shared_ptr<arrow::Int64Array>> {
    ARROW_ASSIGN_OR_RAISE(auto indices, arrow::compute::CallFunction("indices_nonzero", {m}));
    ARROW_ASSIGN_OR_RAISE(auto as_int64, arrow::compute::Cast(indices, arrow::int64()));
    return std::static_pointer_cast<arrow::Int64Array>(as_int64.make_array());
  };
  for (const auto& conjunct : conjuncts) {
    if (!positions && (!MayFail(*conjunct) || !mask)) {
      ARROW_ASSIGN_OR_RAISE(auto view, ColumnsAt(*conjunct, *batch, nullptr));
      ARROW_ASSIGN_OR_RAISE(auto m, Evaluate(*conjunct, *view, ctx));
      if (mask) {
        ARROW_ASSIGN_OR_RAISE(auto both, arrow::compute::And(mask, m));
        mask = both.make_array();
      } else {
        mask = std::move(m);
      }
      continue;
    }
    if (!positions) {
      ARROW_ASSIGN_OR_RAISE(positions, to_positions(mask));
      mask = nullptr;
    }
    if (positions->length() == 0) break;
    ARROW_ASSIGN_OR_RAISE(auto view, ColumnsAt(*conjunct, *batch, positions));
    EvalContext step = ctx;
    step.num_rows = positions->length();
    ARROW_ASSIGN_OR_RAISE(step.source_rows, SourceRowsAt(ctx, positions, n));
    ARROW_ASSIGN_OR_RAISE(auto m, Evaluate(*conjunct, *view, step));
    ARROW_ASSIGN_OR_RAISE(auto kept, to_positions(m));
    ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(positions, kept));
    positions = std::static_pointer_cast<arrow::Int64Array>(taken.make_array());
  }
  FilteredRows out;
  if (mask) {
    const auto& bools = static_cast<const arrow::BooleanArray&>(*mask);
    if (bools.null_count() == 0 && bools.true_count() == n) {
      mask = nullptr;  // keeps every row
    } else {
      // Mask mode to the end: Arrow's record-batch filter, and the source rows it keeps.
      ARROW_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(batch, mask));
      out.batch = filtered.record_batch();
      if (ctx.source_rows) {
        ARROW_ASSIGN_OR_RAISE(auto kept, arrow::compute::Filter(ctx.source_rows, mask));
        out.source_rows = std::static_pointer_cast<arrow::Int64Array>(kept.make_array());
      } else {
        ARROW_ASSIGN_OR_RAISE(auto kept, to_positions(mask));
        ARROW_ASSIGN_OR_RAISE(auto rows, arrow::compute::Add(kept, arrow::Datum(ctx.row_offset)));
        out.source_rows = std::static_pointer_cast<arrow::Int64Array>(rows.make_array());
      }
      return out;
    }
  }
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
