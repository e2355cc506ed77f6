#pragma once

#include <arrow/status.h>

namespace ketch {

/// Registers `per_row_option(input, values; function=F, option=O, ...)`: the function F (one whose
/// pattern, substring or count is the constant option O, e.g. utf8_contains's "pattern" or left's
/// "n") applied with a different O on every row, taken from the column `values`
/// (`col("s").str.contains(col("p"))`). Options `label` and `argument` name the user's function and
/// argument in errors (contains, substr); the other options pass through to F.
///
/// Rows are grouped by their value (Arrow's dictionary_encode), F runs once per distinct value on
/// that value's rows, and the results are put back in row order: a column of few distinct patterns
/// costs a few vectorized calls, a regex compiles once per distinct pattern. A null value gives a
/// null result. `values` must be string-like (for string options) or integer (for int options);
/// the plan-time TypeError names F, O and the expression. Errors of F name the failing value.
arrow::Status RegisterPerRowOptionFunction();

}  // namespace ketch
