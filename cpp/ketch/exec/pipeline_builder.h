#pragma once

// Cuts a physical plan into pipelines at blocking operators (executor.cc).

#include <arrow/util/byte_size.h>
#include <time.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <semaphore>

#include "ketch/common/exception_guard.h"
#include "ketch/common/memory_manager.h"
#include "ketch/common/query_scope.h"
#include "ketch/common/thread_pools.h"
#include "ketch/exec/blocking/cross_join.h"
#include "ketch/exec/blocking/hash_aggregate.h"
#include "ketch/exec/blocking/hash_join.h"
#include "ketch/exec/blocking/into_partitions.h"
#include "ketch/exec/blocking/repartition.h"
#include "ketch/exec/blocking/sample_size.h"
#include "ketch/exec/blocking/sort_merge.h"
#include "ketch/exec/blocking/sort_sink.h"
#include "ketch/exec/blocking/top_n.h"
#include "ketch/exec/blocking/window_sink.h"
#include "ketch/exec/executor.h"
#include "ketch/exec/intermediate/explode.h"
#include "ketch/exec/intermediate/project.h"
#include "ketch/exec/morsel.h"
#include "ketch/exec/pipeline.h"
#include "ketch/exec/sinks/sinks.h"
#include "ketch/exec/sinks/write_sink.h"
#include "ketch/exec/sources/in_memory_source.h"
#include "ketch/exec/sources/materialized_source.h"
#include "ketch/exec/sources/scan_source.h"
#include "ketch/exec/streaming_operator.h"
#include "ketch/io/spill_file.h"
#include "ketch/plan/physical/into_partitions_cuts.h"

namespace ketch::exec {

/// Cuts the physical plan into pipelines at blocking operators. Pipelines that feed others are
/// listed in `stages` in the order they must run (inputs first); the root pipeline is built in place.
/// Smallest morsel a partial aggregate or a sort run is computed on (smaller ones are coalesced).
constexpr int64_t kMinBlockingInputRows = 64 * 1024;

class PipelineBuilder {
 public:
  /// `run_stage` runs a finished input pipeline right away (inputs run before their consumer is
  /// even built, so the builder can choose a plan shape from what they produced).
  PipelineBuilder(const ExecutionConfig& config, MemoryManager* memory,
                  std::function<arrow::Status(PipelineStage&)> run_stage)
      : config_(config),
        memory_(memory),
        compute_(ComputePool(config.num_compute_threads)),
        run_stage_(std::move(run_stage)) {}

  std::vector<PipelineStage> stages;

  /// Bytes of one batch a video scan decodes: the morsel size the executor aims for when morsels
  /// grow (half the budget shared by the morsels in flight), between 1 and 64 MiB.
  int64_t VideoBatchBytes() const;

  arrow::Status Build(const PhysicalNode& node, Pipeline* pipeline);

  /// The join node with a probe morsel size that bounds each probe's output: a probe row yields
  /// up to `max_matches` rows (a hot key), so probe morsels get morsel_size / max_matches rows (at
  /// least 16), keeping outputs near a morsel (and the query interruptible) when keys repeat.
  PhysicalNode ProbeNode(const PhysicalNode& node, const JoinHashTable& table) const;

  /// Ends the pipeline with `sink` (after any streaming sink already there, e.g. a limit).
  static void SetSink(Pipeline* pipeline, std::unique_ptr<StreamingSink> sink);

 private:
  // One builder per operator kind (Build dispatches on the node's kind).
  arrow::Status BuildInMemoryScan(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildIntoBatches(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildRepartition(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildIntoPartitions(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildScan(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildProject(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildFilter(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildExplode(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildSample(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildMonotonicId(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildLimit(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildWrite(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildSort(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildTopN(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildWindow(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildAggregate(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildHashJoin(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildCrossJoin(const PhysicalNode& node, Pipeline* pipeline);
  arrow::Status BuildConcat(const PhysicalNode& node, Pipeline* pipeline);

  Segment& Current(Pipeline* pipeline);

  /// Appends `op` for `node`, honouring the node's morsel size range: while morsels still arrive as
  /// the source cut them, the source cuts smaller ones; otherwise (after a re-chunk, an explode or a
  /// join) and whenever the node needs a minimum (a UDF's batch size), an ordered re-chunk step
  /// goes in front of the operator. `grows_rows`: the operator may output more rows than it got.
  void AddOperator(Pipeline* pipeline, std::unique_ptr<IntermediateOperator> op, const PhysicalNode& node,
                   bool grows_rows = false);

  // A pipeline computing `node`, ending in `sink` (with `last_op` before it), run before its
  // consumer, whose output is materialized.
  arrow::Result<std::shared_ptr<MaterializedBatches>> Materialize(const PhysicalNode& node,
                                                                  std::unique_ptr<StreamingSink> sink);

  // Like Materialize, but the consumer streams the blocking sink's output (ProduceOutput).
  arrow::Result<StreamingSink*> StreamInto(const PhysicalNode& node, std::unique_ptr<StreamingSink> sink,
                                           std::unique_ptr<IntermediateOperator> last_op = nullptr);

  const ExecutionConfig& config_;
  MemoryManager* memory_;
  arrow::internal::Executor* compute_;
  std::function<arrow::Status(PipelineStage&)> run_stage_;
};

}  // namespace ketch::exec
