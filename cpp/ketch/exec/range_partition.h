#pragma once

#include <arrow/api.h>

#include <memory>
#include <string>
#include <vector>

namespace ketch {

/// Sort keys of a range partitioning: columns with a direction and a null placement each.
struct RangeKeys {
  std::vector<std::string> columns;
  std::vector<bool> descending;
  std::vector<bool> nulls_first;
};

/// The `num_partitions - 1` boundary rows (key columns only) that cut `sample` into
/// `num_partitions` ranges of about equal size in sort order: the sample's rows at ranks
/// len * i / num_partitions (i = 1 .. num_partitions - 1), as in Spark's and Daft's range
/// partitioners (boundaries from a sample of each input partition). Fewer distinct boundaries
/// than asked are fine (some partitions are then empty). Invalid for num_partitions < 1.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> RangeBoundaries(
    const std::shared_ptr<arrow::Table>& sample, const RangeKeys& keys, int num_partitions);

/// The range partition of each row of `batch` (int32, one per row): the number of boundary rows
/// that sort strictly before it, so rows that sort equal share a partition and partition i holds
/// only rows that sort at or after those of partition i - 1. Implemented with one Arrow
/// sort_indices over the boundaries followed by the batch rows (stable, boundaries first), so any
/// sortable key type works. TypeError when the batch's key types differ from the boundaries'.
arrow::Result<std::shared_ptr<arrow::Int32Array>> RangePartitionIds(
    const arrow::RecordBatch& batch, const RangeKeys& keys,
    const std::shared_ptr<arrow::RecordBatch>& boundaries);

/// `table` split into `num_partitions` tables by RangePartitionIds: table i holds the rows of
/// range i in their input order (the map side of a distributed sort; each output owns its
/// buffers, gathered with take). Only the key columns are combined to compute the ranges.
/// KeyError for a missing key column, TypeError as RangePartitionIds, Invalid when the
/// boundaries make more ranges than `num_partitions` (more than num_partitions - 1 rows).
arrow::Result<std::vector<std::shared_ptr<arrow::Table>>> RangePartitionTable(
    const std::shared_ptr<arrow::Table>& table, const RangeKeys& keys,
    const std::shared_ptr<arrow::RecordBatch>& boundaries, int num_partitions);

}  // namespace ketch
