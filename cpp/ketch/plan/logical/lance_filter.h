#pragma once

#include <arrow/api.h>

#include <string>
#include <vector>

#include "ketch/expr/expr.h"

namespace ketch {

/// A scan filter cut into what Lance's scanner takes and what Ketch evaluates after the scan.
struct LanceFilter {
  /// Lance (DataFusion) SQL for the translatable conjuncts, joined by AND; empty = nothing pushed.
  std::string sql;
  /// The conjuncts Ketch evaluates on the rows Lance returns: those Lance cannot take, and those
  /// on floating-point columns (Lance orders NaN above every number, Arrow compute does not, so
  /// Lance may return extra rows there; they are checked again). Empty = Lance's rows are final.
  std::vector<ExprPtr> residual;
  /// Number of conjuncts in `sql`.
  int num_pushed = 0;
};

/// Translates the conjuncts of `filter` (nullptr: none) over the columns of `schema`. Translated:
/// comparisons (= <> < <= > >=) of columns and literals of integer, floating, string, Boolean,
/// date32 and time-zone-less timestamp types; Kleene and/or; not; is_null / is_valid. String
/// literals are quoted with '' escaping; column names are quoted with backticks (a name holding a
/// backtick is not translated). Anything else stays in `residual`.
LanceFilter TranslateLanceFilter(const ExprPtr& filter, const arrow::Schema& schema);

}  // namespace ketch
