#pragma once

#include <arrow/api.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "ketch/expr/expr.h"

namespace ketch {

/// Min/max statistics of one column over a block of rows (a Parquet row group).
struct ColumnStats {
  std::shared_ptr<arrow::Scalar> min;  ///< null when unknown
  std::shared_ptr<arrow::Scalar> max;
  int64_t null_count = -1;  ///< -1 when unknown
  int64_t num_rows = 0;
};

/// Looks a column's statistics up by name; nullopt when there are none.
using StatsLookup = std::function<std::optional<ColumnStats>(const std::string& column)>;

/// True when the statistics prove that `predicate` keeps no row of the block (it is false or null
/// for every row), so the block need not be read. Understands and/or, the six comparisons of a
/// column with a literal (either side), is_null and is_valid; anything else may match. Literals are
/// cast to the column's type (when that cast fails the block is kept). The same min/max reasoning
/// as Parquet readers' "row group skipping" (e.g. Arrow Dataset's statistics guarantees).
bool CannotMatch(const Expr& predicate, const StatsLookup& stats);

}  // namespace ketch
