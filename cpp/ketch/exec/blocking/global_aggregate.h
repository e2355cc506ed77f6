#pragma once

#include <arrow/api.h>
#include <arrow/compute/api_aggregate.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ketch {

/// Aggregation without group keys as a plain reduction: `aggregates` (Arrow hash aggregate
/// declarations as Acero's aggregate node takes them) over all rows of `table` at once, with
/// Arrow's scalar aggregate kernels instead of hashing every row on a constant key.
///
/// The result is what the hash aggregate grouped by the constant int8 column `key` gives for a
/// non-empty table: one row, `key` (int8, 0), then per aggregate a column named `aggregate.name`
/// of the hash kernel's output type. Supported: hash_sum ("sum"), hash_count ("count"), hash_min,
/// hash_max, hash_one (the first non-null value; null when there is none), hash_stddev
/// ("stddev"), hash_variance, hash_skew, hash_product, hash_all, hash_any, hash_count_distinct
/// (their scalar counterparts, with the same options) and hash_list (all values in order, nulls kept, as one
/// list<T>). Float sums use Arrow's pairwise summation, so they may differ from the hash kernel's in the last
/// bits.
///
/// Besides Arrow's functions, `kGlobalFloat64Sum` over an int64 or uint64 column: the sum of its
/// values as float64 (summed exactly in 128 bits, then rounded once: the hash path's overflow
/// check, without a float64 copy of the column), null when no value is valid.
///
/// nullopt when an aggregate has no scalar counterpart here, a kernel has no implementation for
/// the input type, or a list would exceed int32 offsets: the caller runs the hash aggregate then.
/// An empty `table` gives an empty (0-row) batch. Errors: other kernel errors.
inline constexpr const char* kGlobalFloat64Sum = "ketch_global_float64_sum";

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> GlobalAggregate(
    const arrow::Table& table, const std::vector<arrow::compute::Aggregate>& aggregates,
    const std::string& key);

/// The constant group key of an aggregation without keys: `n` int8 zeros, no nulls (one memset;
/// Arrow's MakeArrayFromScalar copies value by value). Errors: OutOfMemory.
arrow::Result<std::shared_ptr<arrow::Array>> ZerosInt8(int64_t n);

}  // namespace ketch
