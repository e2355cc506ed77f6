#pragma once

#include <arrow/api.h>

#include <memory>
#include <vector>

#include "ketch/plan/logical/window_spec.h"

namespace ketch {

/// Computes window functions over a table holding whole window partitions (every row of a
/// partition key value is in it). One stable sort by (partition keys, order keys) serves every
/// function; each function is then computed over the sorted columns in O(rows) (O(rows log rows)
/// for range frames) with per-partition, per-peer-group and per-frame row bounds, gathering
/// values with Arrow's take so every value type keeps its type.
///
/// Returns the input's rows sorted by partition then order keys, with `output_schema`: the input
/// columns then one column per function. Frames: none and no order_by = the whole partition;
/// none with order_by = from the partition start to the current row's last peer (SQL's RANGE
/// UNBOUNDED PRECEDING AND CURRENT ROW); rows_between / range_between as given, clipped to the
/// partition. An aggregate over fewer than min_periods non-null values (count: rows) is null.
arrow::Result<std::shared_ptr<arrow::Table>> ComputeWindow(
    const WindowSpec& spec, const std::vector<WindowFunction>& functions, std::shared_ptr<arrow::Table> input,
    const std::shared_ptr<arrow::Schema>& output_schema);

}  // namespace ketch
