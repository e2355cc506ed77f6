#pragma once

#include <arrow/api.h>

#include <memory>
#include <optional>
#include <string>

#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// Two-phase aggregation across partitions (the Ray runner's partial aggregate -> hash shuffle ->
/// final aggregate). A partial node turns its whole input into one row per group of partial
/// states; a final node merges the partial states of any number of partial nodes (rows of one
/// group may come from many) and finishes them into the aggregate's output.
///
/// Partial-state schema (PartialAggregateSchema): the group keys with their input types (or, with
/// no keys, the column "__ketch_all" of type int8, always 0), then per aggregation i, in order:
///   sum            -> __a{i}_sum (int64 / uint64 / float64), and for int64/uint64 inputs also
///                     __a{i}_fsum (float64, the overflow check)
///   count          -> __a{i}_count (int64)
///   mean           -> __a{i}_sum (float64), __a{i}_count (int64)
///   min, max       -> __a{i}_min / __a{i}_max (the input type)
///   any_value      -> __a{i}_one (the input type)
///   product        -> __a{i}_prod (int64 / uint64 / float64)
///   bool_and/or    -> __a{i}_bool (boolean)
///   var, skew      -> __a{i}_n (int64), __a{i}_mean, __a{i}_m2 and for skew __a{i}_m3 (float64:
///                     count, mean and central moment sums, merged as aggregate_state_merge.h says)
///   count_distinct, set -> __a{i}_dlist (list<input type>: the group's distinct non-null values)
///   percentile     -> __a{i}_vlist (list<float64>: the group's values)
/// Aggregations that collect values (list, concat, approx_count_distinct, approx_percentiles)
/// or run over raw values (stddev) or aggregate row
/// positions (any_value/list of nested or extension types) have no mergeable state: an aggregate
/// with one of them is single-phase (AggregateIsSinglePhase) and cannot be split.

/// The key column of aggregations without group keys.
inline constexpr const char* kAggregateAllRowsKey = "__ketch_all";

/// The name of aggregation `i`'s state column `part` ("sum", "count", ...): "__a{i}_{part}".
std::string AggregateStateColumn(size_t i, const char* part);

/// True for aggregate functions that collect the values of a group (no mergeable state).
bool AggregationCollectsValues(const std::string& function);

/// True for any_value/list over types Arrow's hash kernels cannot take (nested, extension):
/// these aggregate row positions and gather the values afterwards.
bool AggregationByRowPosition(const AggregationInfo& info);

/// True when one of `spec`'s aggregations (resolved against `input`) has no mergeable state.
bool AggregateIsSinglePhase(const AggregateSpec& spec, const arrow::Schema& input);

/// The schema of the partial states of `spec` over rows of schema `input` (see above).
/// Errors: those of ResolveAggregation; Invalid when the aggregate is single-phase.
arrow::Result<std::shared_ptr<arrow::Schema>> PartialAggregateSchema(const AggregateSpec& spec,
                                                                     const arrow::Schema& input);

/// A full aggregate split into its phases: `partial` over the aggregate's own input, `final` over
/// an empty in-memory placeholder of the partial schema (replace it with WithInputs).
struct AggregateSplit {
  LogicalPlanPtr partial;
  LogicalPlanPtr final;
};

/// The phases of `aggregate` (a kFull Aggregate node), or nullopt when it is not an aggregate,
/// not kFull, or single-phase.
arrow::Result<std::optional<AggregateSplit>> SplitAggregate(const LogicalPlanPtr& aggregate);

}  // namespace ketch
