#pragma once

#include <arrow/api.h>

#include <vector>

#include "ketch/expr/expr.h"
#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// Whether `e` calls an aggregation (`agg_*`) anywhere in its tree outside window calls.
bool ContainsAggregationCall(const Expr& e);

/// Plans `groupby(keys).agg(aggregations)` (or, with no keys, `agg(aggregations)`) for any
/// expressions, as Daft does:
/// - a key may be any expression (`col("a") % 2`, `col("g").alias("x")`); its output column is
///   named by its output name (`a`, `x`) and its value is computed in a projection below the
///   aggregate, under a hidden name, so aggregations still read the original columns;
/// - an aggregation may be any expression over aggregation calls, group keys and literals
///   (`col("a").sum() + 1`, `col("a").mean() + col("b").mean()`, `(col("g") + "x")`): every
///   aggregation call becomes a column of the Aggregate node and the rest a projection above it,
///   named by the expression's output name.
/// The output holds the keys, in order, then one column per aggregation.
///
/// Plain column keys and plain aggregation calls give the bare Aggregate node (the plan is unchanged
/// for them). Errors: arrow::Status::Invalid (ValueError in Python) naming the expression when
/// an aggregation reads a column that is neither a key nor inside an aggregation call, when one
/// aggregation call is nested in another, or when an expression holds no aggregation at all (Daft's
/// "must be composed of non-nested aggregation expressions"); the Aggregate node's own errors
/// (types, duplicate output names) otherwise.
arrow::Result<LogicalPlanPtr> AggregateExpressions(LogicalPlanPtr input, std::vector<ExprPtr> keys,
                                                   std::vector<ExprPtr> aggregations);

}  // namespace ketch
