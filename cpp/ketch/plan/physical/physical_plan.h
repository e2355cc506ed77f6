#pragma once

#include <memory>
#include <string>

#include "ketch/common/config.h"
#include "ketch/plan/logical/logical_plan.h"
#include "ketch/plan/logical/plan_stats.h"

namespace ketch {

enum class PhysicalKind {
  kInMemoryScan,
  kScan,  ///< Parquet, CSV or JSON scan tasks
  kProject,
  kUdfProject,
  kFilter,
  kLimit,
  kWrite,
  kSort,       ///< blocking sink: sorts all input (Arrow sort_indices + take)
  kTopN,       ///< Limit (at most kTopNMaxRows rows) of a Sort: best rows per morsel, then a blocking sink
  kAggregate,  ///< two-phase: partial aggregate per morsel, final merge in a blocking sink
  kHashJoin,   ///< blocking on both inputs, hash table on the smaller side
  kCrossJoin,  ///< how="cross": the smaller input materialized, the larger one streams
  kExplode,
  kConcat,
  kSample,
  kRepartition,     ///< map (partition ids per morsel, parallel) + blocking sink per output partition
  kIntoPartitions,  ///< blocking sink: splits / coalesces adjacent partitions
  kIntoBatches,     ///< ordered re-chunk into exact batches, one partition each
  kWindow,          ///< blocking sink: window functions per partition (exec/blocking/window_sink.h)
  kMonotonicId,     ///< streaming sink: numbers rows in stream order (exec/sinks/sinks.h)
};

struct PhysicalNode;
using PhysicalPlanPtr = std::shared_ptr<const PhysicalNode>;

/// One operator of the physical plan with its scheduling properties. Parameters (expressions,
/// scan pushdowns, write target) are read from the optimized logical node it came from.
struct PhysicalNode {
  PhysicalKind kind = PhysicalKind::kProject;
  LogicalPlanPtr logical;
  std::vector<PhysicalPlanPtr> inputs;  ///< empty for sources
  int32_t concurrency = 0;              ///< worker threads of its own (UDF projects); 0 = the compute pool
  /// The morsel sizes the operator accepts, in rows: the executor re-chunks morsels in front of it
  /// when what arrives falls outside [min, max]. 0 = no bound. A UDF with a batch size takes
  /// exactly that many rows (the last call of a query may have fewer).
  int64_t min_morsel_rows = 0;
  int64_t max_morsel_rows = 0;
  int64_t batch_size = 0;  ///< rows per UDF call (UDF projects)
  bool io_bound = false;   ///< waits on I/O (url.download): runs on the I/O pool
  /// Its outputs may be much larger than its inputs (downloads, decoded images, UDF results): the
  /// executor sizes its morsels by the bytes it is seen to produce per row (memory budget).
  bool grows_bytes = false;
  /// Hash joins: build the hash table on the left input (inner joins whose right input is
  /// estimated at more than twice the left's rows); else on the right. Cross joins: materialize
  /// the left input (estimated smaller) and stream the right one; else the other way round.
  bool build_left = false;
  /// Estimated output rows (EstimateRows), for choosing join sides.
  double estimated_rows = 0;
  /// Repartition / into_partitions: the output partition count (repartition(None) resolved to
  /// the input's count).
  int64_t num_partitions = 0;

  std::string Label() const;
  std::vector<std::string> Details() const;
  /// The tree in Daft's explain style; `with_stats` adds each node's Stats line (EstimateStats of
  /// its logical node: rows, bytes, filter selectivity, partitions).
  std::string ToString(bool with_stats = false) const;
};

/// Translates an optimized logical plan into a physical plan: projects that call Python UDFs become
/// UDF projects with their own workers; image and URL kernels ask for small morsels so few rows
/// still spread over every core.
arrow::Result<PhysicalPlanPtr> TranslateToPhysical(const LogicalPlanPtr& plan, const ExecutionConfig& config);

}  // namespace ketch
