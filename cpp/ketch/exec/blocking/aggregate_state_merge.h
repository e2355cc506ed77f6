#pragma once

#include <arrow/api.h>

#include <memory>

#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// Partial states of var / skew (moments) and count_distinct / set (distinct lists) that Arrow's
/// hash kernels cannot merge: the hash aggregate collects each group's row positions
/// (hash_list over "__position") and these fold the rows of every group here.
///
/// Moments: per partial row n (int64, valid values), mean (float64), M2 = sum((x - mean)^2) and,
/// for skew, M3 = sum((x - mean)^3), computed per morsel by Arrow's stable hash_count / hash_mean /
/// hash_variance / hash_skew. Two rows a, b merge with the pairwise formulas of Chan, Golub and
/// LeVeque (1979) for M2 and their extension to M3 by Pébay (2008):
///   n = na + nb,  d = mean_b - mean_a,  mean = mean_a + d * nb / n
///   M2 = M2a + M2b + d^2 * na * nb / n
///   M3 = M3a + M3b + d^3 * na * nb * (na - nb) / n^2 + 3 d (na * M2b - nb * M2a) / n
/// which add no cancellation of large sums (unlike sum / sum of squares).
/// Distinct lists: per partial row the distinct non-null values of its group (list<T>); merged by
/// concatenating a group's lists and keeping each non-null value once.

/// True for aggregations whose partial states merge here (agg_var, agg_skew, agg_count_distinct,
/// agg_set, and agg_percentile whose state is the list of the group's values, concatenated).
bool MergesByFold(const std::string& function);
bool IsMomentAggregation(const std::string& function);

/// Adds the M2 (and for skew M3) state columns of moment aggregation `i` to a partial batch that
/// has __a{i}_n, __a{i}_mean, __a{i}_pvar (population variance) and for skew __a{i}_pskew.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> AddMomentStates(std::shared_ptr<arrow::RecordBatch> batch,
                                                                   const AggregationInfo& info, size_t i);

/// Moment states of one value per row (the partial phase's no-grouping mode): n 1 or 0, mean the
/// value, M2 = M3 = 0. `values` is float64.
arrow::Status MomentStatesOfRows(const AggregationInfo& info, size_t i,
                                 const std::shared_ptr<arrow::Array>& values, arrow::FieldVector* fields,
                                 arrow::ArrayVector* columns);

/// Merges the states of aggregation `i` over each group's rows (`positions`: list<int64> of row
/// positions into `table`, one list per group) and appends the merged state columns (same
/// names) to `merged`.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> FoldStates(std::shared_ptr<arrow::RecordBatch> merged,
                                                              const arrow::Table& table,
                                                              const std::shared_ptr<arrow::Array>& positions,
                                                              const AggregationInfo& info, size_t i);

/// The finished value of a folded aggregation `i` from the merged state columns of `merged`
/// (var with its ddof, skew, count_distinct, set).
arrow::Result<arrow::Datum> FinishFolded(const arrow::RecordBatch& merged, const AggregationInfo& info,
                                         size_t i);

/// One-element lists [v] per row of `values` (the distinct-list state of a single row).
arrow::Result<std::shared_ptr<arrow::Array>> SingletonLists(const std::shared_ptr<arrow::Array>& values);

}  // namespace ketch
