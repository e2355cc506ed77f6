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
/// Two-phase (mergeable) ones: product (hash_product -> "__a{i}_prod", merged by hash_product) and
/// bool_and / bool_or (hash_all / hash_any -> "__a{i}_bool", merged by the same kernel; nulls
/// skipped, null when a group has no non-null value). The others run in one phase over the raw
/// values: count_distinct (hash_count_distinct), set (hash_distinct), var (hash_variance, ddof),
/// skew (hash_skew, biased), approx_percentiles (hash_tdigest), percentile (hash_list, then an
/// exact linear-interpolated quantile per group).

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

/// The finished values of aggregation `i` from the merged columns (`column` looks one up by name):
/// one per group, before the cast to the output type. Errors: kernel errors.
arrow::Result<arrow::Datum> FinishMoreAggregation(
    const AggregationInfo& info, size_t i,
    const std::function<arrow::Result<arrow::Datum>(const std::string&)>& column);

}  // namespace ketch
