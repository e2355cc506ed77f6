#pragma once

#include <arrow/api.h>

#include <memory>
#include <string>
#include <vector>

#include "ketch/expr/expr.h"

namespace ketch {

/// Plan-time rules of the aggregations added beside the original set (sum, mean, min, max,
/// count, stddev, any_value, list, concat, approx_count_distinct), with Daft's names:
///   agg_product            numeric -> int64 / uint64 / float64 (like sum); null for no values
///   agg_bool_and/or        boolean -> boolean; null for no non-null values
///   agg_count_distinct     any flat type -> uint64, distinct non-null values
///   agg_set                any flat type -> large_list<T>, distinct non-null values
///   agg_var                numeric -> float64, option "ddof" (int, default 1)
///   agg_skew               numeric -> float64, population (biased) skewness
///   agg_approx_percentiles numeric -> float64 (option "scalar" true) or
///                          fixed_size_list<float64, n>; option "percentiles": the fractions as
///                          text "0.25,0.5" (each in [0, 1]); t-digest estimates
///   agg_percentile         numeric -> float64, option "percentage" (double in [0, 1]); exact,
///                          linear interpolation between the closest ranks (median: 0.5)

/// True for the function names above.
bool IsMoreAggregation(const std::string& function);

/// The output type of `function` over `input`; nullptr when `input`'s type is not accepted (the
/// caller reports it). Errors: Invalid for a missing or out-of-range option (percentiles outside
/// [0, 1], negative ddof).
arrow::Result<std::shared_ptr<arrow::DataType>> MoreAggregationOutputType(const std::string& function,
                                                                          const arrow::DataType& input,
                                                                          const FunctionOptions& options);

/// The fractions of agg_approx_percentiles' "percentiles" option, each checked to be in [0, 1].
/// Errors: Invalid naming the offending value.
arrow::Result<std::vector<double>> AggregationPercentiles(const FunctionOptions& options);

/// agg_percentile's "percentage" option, checked to be in [0, 1]. Errors: Invalid.
arrow::Result<double> AggregationPercentage(const FunctionOptions& options);

/// The "ddof" option of agg_var / agg_stddev, or `fallback` when absent. Errors: Invalid when < 0.
arrow::Result<int> AggregationDdof(const FunctionOptions& options, int fallback);

}  // namespace ketch
