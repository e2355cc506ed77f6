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
/// ("stddev") and hash_list (all values in order, nulls kept, as one list<T>). Float sums use
/// Arrow's pairwise summation, so they may differ from the hash kernel's in the last bits.
///
/// nullopt when an aggregate has no scalar counterpart here, a kernel has no implementation for
/// the input type, or a list would exceed int32 offsets: the caller runs the hash aggregate then.
/// An empty `table` gives an empty (0-row) batch. Errors: other kernel errors.
arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> GlobalAggregate(
    const arrow::Table& table, const std::vector<arrow::compute::Aggregate>& aggregates,
    const std::string& key);

}  // namespace ketch
