#pragma once

#include <arrow/api.h>

#include <memory>
#include <vector>

#include "ketch/expr/expr.h"

namespace ketch {

/// The rows of a batch that pass a filter, with their source row numbers.
struct FilteredRows {
  std::shared_ptr<arrow::RecordBatch> batch;
  std::shared_ptr<arrow::Int64Array> source_rows;  ///< one per kept row (ctx.SourceRow of it)
};

/// Applies a conjunction of predicates to `batch` in order, each evaluated only on the rows the
/// earlier ones kept (a selection, as DuckDB's filters do): a later conjunct never sees, and so
/// never fails on, a row an earlier one removed (`s != "x" and cast(s as int64) > 2` is safe, as it
/// is when written as two filters), and selective conjuncts first make later ones cheaper. Each
/// conjunct is evaluated on just the columns it reads; the kept rows are gathered once at the end.
/// Null counts as false. Errors are those of the predicates (naming their source rows).
arrow::Result<FilteredRows> FilterRows(const std::vector<ExprPtr>& conjuncts,
                                       const std::shared_ptr<arrow::RecordBatch>& batch,
                                       const EvalContext& ctx);

}  // namespace ketch
