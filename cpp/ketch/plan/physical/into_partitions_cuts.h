#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// The streaming form of into_partitions(num), for an input whose partitions are known before it
/// runs: `pieces[i]` are the row counts of the output partitions cut from input partition i, in
/// order (kAllRows: all of it, when several inputs are coalesced into one output), numbered from
/// `first[i]`; the same cut as IntoPartitionsSink's. The executor then relabels and slices the
/// morsels as they pass (an ordered re-chunk step) instead of holding the whole input.
struct IntoPartitionsCuts {
  static constexpr int64_t kAllRows = -1;
  std::vector<std::vector<int64_t>> pieces;
  std::vector<int64_t> first;
  int64_t num_outputs = 0;
};

/// The cuts of into_partitions(`num_partitions`) over `input`, or nullopt when they depend on
/// row counts not known before the input runs (then IntoPartitionsSink holds the input):
/// coalescing (fewer outputs than input partitions) needs only the exact partition count; a
/// split needs each input partition's rows (in-memory data, Parquet/Lance scan tasks without a
/// filter or limit, under projections).
std::optional<IntoPartitionsCuts> StreamingIntoPartitionsCuts(const LogicalPlan& input,
                                                              int64_t num_partitions);

}  // namespace ketch
