#pragma once

#include <arrow/api.h>
#include <arrow/util/thread_pool.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ketch/common/memory_manager.h"
#include "ketch/exec/scan_metrics.h"
#include "ketch/expr/expr.h"

namespace ketch {

/// A source pushes batches of any size; the executor re-chunks them into morsels and applies
/// backpressure: `emit` blocks while the pipeline's channels are full, and returns Cancelled when
/// the query no longer needs input (a limit was reached or an operator failed). With each batch the
/// source says which source rows it holds: `first_row` when they are contiguous, or `source_rows`
/// (one per batch row) when a pushed filter dropped some; errors then name the right row.
///
/// `partition`: the partition the batch belongs to (a scan task, an in-memory partition, a bucket
/// of a repartition). Partition numbers never decrease along a stream; a partition with no rows is
/// announced by an empty batch, so its number still reaches the result.
class Source {
 public:
  using Emit =
      std::function<arrow::Status(std::shared_ptr<arrow::RecordBatch> batch, int64_t first_row,
                                  std::shared_ptr<arrow::Int64Array> source_rows, int64_t partition)>;
  virtual ~Source() = default;
  virtual std::string name() const = 0;
  virtual arrow::Status Produce(const Emit& emit) = 0;
  /// File scans count what they read here (the query's ExecutionStats).
  virtual void set_scan_metrics(ScanMetrics* metrics) {}
};

/// A stateless morsel → morsel operator (project, filter, UDF project). Many workers call Execute
/// at once on different morsels; it runs on `executor()` (the compute pool, or the operator's own
/// workers for UDFs).
class IntermediateOperator {
 public:
  virtual ~IntermediateOperator() = default;
  virtual std::string name() const = 0;
  virtual arrow::internal::Executor* executor() const = 0;
  /// Threads of its own (a UDF project's workers), 0 when it runs on a shared pool. Each needs a
  /// morsel in flight to be busy (the executor sizes the pipeline's in-flight bound with it).
  virtual int32_t own_workers() const { return 0; }
  /// True when its outputs may be much larger than its inputs (PhysicalNode::grows_bytes): the
  /// executor then cuts the morsels of its segment by the bytes it produces per input row.
  virtual bool grows_bytes() const { return false; }
  /// `ctx` describes the morsel's rows; an operator that drops rows updates `ctx->source_rows`.
  virtual arrow::Result<std::shared_ptr<arrow::RecordBatch>> Execute(
      const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const = 0;
};

/// A streaming sink sees morsels one at a time, in source order (the executor re-orders), and may
/// pass a morsel on to the next pipeline (limit) or keep it (collect, write). `Done` tells the
/// executor to stop the source early.
class StreamingSink {
 public:
  virtual ~StreamingSink() = default;
  virtual std::string name() const = 0;
  virtual arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) = 0;
  virtual bool Done() const { return false; }
  /// The stream position of the morsel the next Push passes: its sequence number and, for a
  /// piece of a split morsel, the piece's number. Morsels reach a sink in the order workers
  /// finish them; a sink whose result would depend on that order (float sums: addition does not
  /// associate) keeps the positions and combines in stream order instead.
  virtual void NoteNextPosition(int64_t seq, int64_t sub) {}
  /// The first row of the last morsel passed to Push that the last output starts at (a limit
  /// with an offset skips rows); 0 when the output is a prefix of the morsel.
  virtual int64_t LastOutputStart() const { return 0; }
  /// Called (in stream order) before the first morsel of each partition after the first one, and
  /// for an empty partition, before or instead of its morsels.
  virtual arrow::Status BeginPartition(int64_t partition) { return arrow::Status::OK(); }
  /// False when the morsels the sink passes on all belong to partition 0 (a limit gathers its
  /// input into one partition); true when they keep the partition they came from.
  virtual bool KeepsPartitions() const { return true; }
  /// Called once after the last Push; returns the sink's final output (collected rows, written paths).
  virtual arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> Finalize() {
    return std::vector<std::shared_ptr<arrow::RecordBatch>>{};
  }
  /// Instead of Finalize, for blocking sinks whose output feeds another pipeline: pushes the output
  /// into `emit` batch by batch, so a sink that spilled never holds its whole output in memory.
  virtual arrow::Status ProduceOutput(const Source::Emit& emit) {
    ARROW_ASSIGN_OR_RAISE(auto batches, Finalize());
    int64_t row = 0;
    for (auto& batch : batches) {
      const int64_t n = batch->num_rows();
      ARROW_RETURN_NOT_OK(emit(std::move(batch), row, nullptr, 0));
      row += n;
    }
    return arrow::Status::OK();
  }

  /// Where the sink counts the bytes it reserves from the memory budget (explain_analyze).
  void set_memory_tracker(MemoryTracker* tracker) { memory_tracker_ = tracker; }

 protected:
  MemoryTracker* memory_tracker_ = nullptr;
};

}  // namespace ketch
