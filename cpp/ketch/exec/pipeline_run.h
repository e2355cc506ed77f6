#pragma once

// Runs one pipeline (executor.cc): schedules morsels over the compute and I/O pools under the
// in-flight permits (backpressure), keeps source order at each segment's end, and records the first
// error. Re-chunk steps: pipeline_rechunk.cc; morsel sizes: morsel_sizing.cc.

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
#include "ketch/exec/morsel_sizing.h"
#include "ketch/exec/operator_timing.h"
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

class PipelineRun {
 public:
  PipelineRun(Pipeline* pipeline, const ExecutionConfig& config, ExecutionStats* stats, int32_t index,
              MemoryManager* memory, bool auto_in_flight, uint64_t query_id);

  /// Runs the pipeline to its end; finalizes its sinks (all but the last when `finalize_last` is
  /// false: a consumer pipeline streams that one's output) and returns the last one's output.
  arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> Run(bool finalize_last = true);

 private:
  void RunSource();

  // Blocks while the pipeline is full (backpressure); false when the query stopped.
  bool AcquirePermit();

  // The permit returns under the lock, after the count drops, so the count never exceeds the bound;
  // nothing touches `this` after the unlock (the waiting thread may destroy it then).
  void TaskStarted();

  // The last thing a task does; the run may be destroyed right after the unlock.
  void TaskDone();

  // True once the user asked to stop (records the error the query then fails with).
  bool Cancelled();

  void ReleasePermits(int64_t n);
  void ReleasePermit() { ReleasePermits(1); }

  // The first error wins; it also raises the query's cancel flag, so calls that wait on user code
  // or on the network (UDFs, downloads) give up instead of finishing work nobody will read.
  //
  // `first_row`: the first source row of the failing morsel, when known. Morsels fail in parallel;
  // a later error replaces the recorded one when it comes from earlier rows (and is not a
  // consequence of the cancellation), so the error names the first bad row as often as possible.
  void Fail(const arrow::Status& status, int64_t first_row = std::numeric_limits<int64_t>::max());

  // Runs the morsel through segment `seg` from operator `op` on, hopping executors as needed.
  void Schedule(size_t seg, size_t op, Morsel morsel);

  // A morsel that will not reach the sink still passes the re-order buffer (empty), so the morsels
  // behind it are released too; otherwise a failed query would wait for them forever. Frees the
  // morsel's data and memory first: once the last permit returns, the run may end and its memory
  // manager go away.
  void Drop(size_t seg, Morsel&& morsel);

  void Step(size_t seg, size_t op, arrow::internal::Executor* executor, Morsel morsel);

  // Runs a streaming operator (a lazy generator UDF) on `morsel`: each piece but the last goes on
  // through the rest of the segment as a morsel of its own (same seq, next sub); the last one is
  // returned, `morsel` becoming the stream's last piece. A piece waits for an in-flight permit
  // like a source morsel, except when its stream is the segment's oldest (the next to reach the
  // segment's end) and none of its pieces is on the way: then it goes on without one, so the
  // pieces of later morsels, waiting behind it with their permits, can never stall it.
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> ExecuteStream(size_t seg, size_t op,
                                                                   const StreamingOperator& streaming,
                                                                   arrow::internal::Executor* executor,
                                                                   Morsel* morsel, OperatorMetrics* metrics);

  // The first source row of a morsel (max when it has none).
  static int64_t FirstRow(const Morsel& morsel);

  // True while no error is recorded, or the recorded one comes from rows after `first_row`.
  bool BeforeError(int64_t first_row);

  bool error_ok();

  // Tells segment `seg` how many morsels its upstream sent in all (the source, or the previous
  // segment once it finished), so it can flush a re-chunk remainder and finish in turn.
  void InputComplete(size_t seg, int64_t total);

  // Hands the morsel to the segment's sink (or re-chunk step) in source order; forwards output to
  // the next segment. Without a morsel, only checks whether the segment's input is complete.
  void Deliver(size_t seg, std::optional<Morsel> morsel);

  // Re-chunk step (under the segment's lock). Buffered morsels hold no in-flight permit (else the
  // source could not send the rows that complete a batch); an output takes over the permit of the
  // morsel that completed it, so the morsels in flight behind the step stay bounded.
  void RechunkPush(Segment& segment, Morsel morsel, std::vector<Morsel>* forward, int64_t* released);

  // Streaming into_partitions: sends an empty batch for each output partition before `upto` that
  // has had none (an empty piece, or coalesced inputs without rows), so every output exists.
  void BeginOutputsUpTo(Segment& segment, int64_t upto, std::vector<Morsel>* forward);

  // Streaming into_partitions: the morsel's rows cut at the pieces of its input partition, each
  // slice labelled with its output partition (zero-copy); the morsel's permit and memory go with
  // its last slice.
  void CutIntoPartitions(Segment& segment, Morsel morsel, std::vector<Morsel>* forward, int64_t* released);

  // At the end of the input, sends on what the re-chunk step still holds (fewer than min rows).
  void RechunkFlush(Segment& segment, std::vector<Morsel>* forward);

  // Rows per morsel entering segment `seg`: `static_max`, or fewer when the segment's operators
  // are seen to produce so many bytes per row that a morsel would outgrow its share of the budget.
  // Before the first observation, its morsels are probes (kProbeDivisor).
  int64_t AdaptiveRows(size_t seg, int64_t static_max) const;

  // A re-chunk step feeds the next segment; exact batches (a UDF's batch_size) are never cut.
  int64_t RechunkMaxRows(const Segment& segment) const;

  // Records what a growing operator produced per input row: the estimate rises at once and
  // decays slowly (an estimate: concurrent updates may race harmlessly).
  void Observe(size_t seg, double bytes_per_row);

  size_t SegmentIndex(const Segment& segment) const;

  // Takes the first `rows` buffered rows as one morsel (zero-copy when they lie in one morsel).
  arrow::Result<Morsel> CutRechunk(Rechunk& r, int64_t rows);

  Pipeline* pipeline_;
  MemoryManager* memory_;
  arrow::internal::Executor* compute_;
  arrow::internal::Executor* io_;
  const int64_t in_flight_bound_;
  std::counting_semaphore<> permits_;
  ExecutionStats* stats_;
  const uint64_t query_id_;
  struct SegmentSizing {
    bool adaptive = false;  // an operator of the segment grows its morsels' bytes
    std::atomic<double> bytes_per_row{0};
  };
  std::vector<std::unique_ptr<SegmentSizing>> sizing_;  // per segment
  int64_t target_morsel_bytes_ = 0;
  OperatorMetrics* source_metrics_ = nullptr;
  std::vector<std::vector<OperatorMetrics*>> op_metrics_;
  std::vector<OperatorMetrics*> sink_metrics_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable done_;
  bool source_finished_ = false;
  std::atomic<int64_t> in_flight_{0};  // changed under mutex_; read without it while waiting for memory
  int64_t active_tasks_ = 0;           // spawned tasks that have not returned yet
  arrow::Status error_;
  int64_t error_row_ = std::numeric_limits<int64_t>::max();  // first source row of error_'s morsel
};

}  // namespace ketch::exec
