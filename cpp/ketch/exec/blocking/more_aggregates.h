#pragma once

#include <arrow/api.h>
#include <arrow/compute/api_aggregate.h>

#include <functional>
#include <string>
#include <vector>

#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// Execution of the aggregations of more_aggregations.h with Arrow's hash aggregate kernels,
/// inside the hash aggregate (hash_aggregate.cc). Aggregation i reads its values from the column
/// "__a{i}_v" (cast to float64 for var, skew and the percentiles: MoreAggregationInputAsDouble).
///
/// Two-phase (mergeable) ones: product (hash_product -> "__a{i}_prod", merged by hash_product),
/// bool_and / bool_or (hash_all / hash_any -> "__a{i}_bool", merged by the same kernel; nulls
/// skipped, null when a group has no non-null value), var / skew (hash_count, hash_mean,
/// hash_variance, hash_skew per morsel -> moment states) and count_distinct / set (hash_distinct
/// -> distinct lists) and percentile (hash_list -> value lists; an exact linear-interpolated
/// quantile per group at the end); these merge in aggregate_state_merge.h. approx_percentiles
/// (hash_tdigest) runs in one phase over the raw values. When an aggregate is single-phase for another
/// aggregation's sake, var / skew / count_distinct / set run hash_variance / hash_skew /
/// hash_count_distinct / hash_distinct over the raw values.

/// True when aggregation `info` reads its values as float64.
bool MoreAggregationInputAsDouble(const AggregationInfo& info);

/// The partial phase's hash aggregates of mergeable aggregation `i` over its raw values (product,
/// bool_and/or); empty for the others.
arrow::Result<std::vector<arrow::compute::Aggregate>> MorePartialAggregates(const AggregationInfo& info,
                                                                            size_t i);

/// The merge's hash aggregates of aggregation `i`: over partial states, or with `single_phase` over
/// the raw values. Errors: invalid options (see more_aggregations.h).
arrow::Result<std::vector<arrow::compute::Aggregate>> MoreMergeAggregates(const AggregationInfo& info,
                                                                          size_t i, bool single_phase);

/// Exact quantile `q` (linear interpolation) of each list of a list<float64> array; null for a
/// list without valid (non-null, non-NaN) values. Errors: kernel errors.
arrow::Result<std::shared_ptr<arrow::Array>> QuantilePerList(const std::shared_ptr<arrow::Array>& lists,
                                                             double q);

/// The finished values of aggregation `i` from the merged columns (`column` looks one up by name):
/// one per group, before the cast to the output type. Errors: kernel errors.
arrow::Result<arrow::Datum> FinishMoreAggregation(
    const AggregationInfo& info, size_t i,
    const std::function<arrow::Result<arrow::Datum>(const std::string&)>& column);

}  // namespace ketch
