#include "ketch/exec/executor.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <semaphore>

#include "ketch/common/thread_pools.h"
#include "ketch/exec/intermediate/project.h"
#include "ketch/exec/sinks/sinks.h"
#include "ketch/exec/sources/in_memory_source.h"
#include "ketch/exec/sources/parquet_scan.h"

namespace ketch {
namespace {

struct Morsel {
  int64_t seq = 0;
  std::shared_ptr<arrow::RecordBatch> batch;
  EvalContext rows;  // which source rows the morsel holds
};

/// A run of stateless operators ending in an order-sensitive sink.
struct Segment {
  std::vector<std::unique_ptr<IntermediateOperator>> ops;
  std::unique_ptr<StreamingSink> sink;
  // Re-order buffer in front of the sink.
  std::mutex mutex;
  std::map<int64_t, Morsel> pending;
  int64_t next_seq = 0;
  int64_t next_out_seq = 0;
};

/// Runtime operators built from the physical plan: the source and the segments in flow order.
struct Pipeline {
  std::unique_ptr<Source> source;
  std::vector<std::unique_ptr<Segment>> segments;
  int64_t morsel_rows = 0;
};

arrow::Status BuildNode(const PhysicalNode& node, const ExecutionConfig& config, Pipeline* pipeline) {
  if (node.input) ARROW_RETURN_NOT_OK(BuildNode(*node.input, config, pipeline));
  if (node.max_morsel_rows > 0) pipeline->morsel_rows = std::min(pipeline->morsel_rows, node.max_morsel_rows);
  auto* compute = ComputePool(config.num_compute_threads);
  auto current = [&]() -> Segment& {
    if (pipeline->segments.empty() || pipeline->segments.back()->sink) {
      pipeline->segments.push_back(std::make_unique<Segment>());
    }
    return *pipeline->segments.back();
  };
  const LogicalPlan& logical = *node.logical;
  switch (node.kind) {
    case PhysicalKind::kInMemoryScan:
      pipeline->source = std::make_unique<InMemorySource>(logical.batches());
      return arrow::Status::OK();
    case PhysicalKind::kParquetScan:
      pipeline->source =
          std::make_unique<ParquetScanSource>(logical.scan(), logical.schema(), config.morsel_size_rows);
      return arrow::Status::OK();
    case PhysicalKind::kProject:
    case PhysicalKind::kUdfProject: {
      ARROW_ASSIGN_OR_RAISE(
          auto op, ProjectOperator::Make(logical.exprs(), logical.schema(), compute,
                                         node.kind == PhysicalKind::kUdfProject ? node.concurrency : 0));
      current().ops.push_back(std::move(op));
      return arrow::Status::OK();
    }
    case PhysicalKind::kFilter:
      current().ops.push_back(std::make_unique<FilterOperator>(logical.predicate(), compute));
      return arrow::Status::OK();
    case PhysicalKind::kLimit:
      current().sink = std::make_unique<LimitSink>(logical.limit());
      return arrow::Status::OK();
    case PhysicalKind::kWriteParquet: {
      ARROW_ASSIGN_OR_RAISE(current().sink,
                            WriteParquetSink::Make(logical.write(), logical.inputs()[0]->schema()));
      return arrow::Status::OK();
    }
  }
  return arrow::Status::NotImplemented("physical node");
}

class PipelineRun {
 public:
  PipelineRun(Pipeline* pipeline, const ExecutionConfig& config, ExecutionStats* stats)
      : pipeline_(pipeline),
        compute_(ComputePool(config.num_compute_threads)),
        io_(IoPool(config.num_io_threads)),
        permits_(config.max_morsels_in_flight),
        stats_(stats) {}

  arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> Run() {
    auto spawned = io_->Spawn([this] { RunSource(); });
    if (!spawned.ok()) return spawned;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [this] { return source_finished_ && in_flight_ == 0; });
    }
    if (!error_.ok()) return error_;
    std::vector<std::shared_ptr<arrow::RecordBatch>> output;
    for (auto& segment : pipeline_->segments) {
      ARROW_ASSIGN_OR_RAISE(output, segment->sink->Finalize());
    }
    return output;
  }

 private:
  void RunSource() {
    int64_t seq = 0;
    const int64_t morsel_rows = pipeline_->morsel_rows;
    auto emit = [&](std::shared_ptr<arrow::RecordBatch> batch, int64_t first_row,
                    std::shared_ptr<arrow::Int64Array> source_rows) -> arrow::Status {
      // Re-chunk into morsels; an empty batch still travels (it carries the schema to the sink).
      for (int64_t start = 0; start < batch->num_rows() || (start == 0 && batch->num_rows() == 0);
           start += morsel_rows) {
        if (!AcquirePermit()) return arrow::Status::Cancelled("query finished or failed");
        const int64_t length = std::min(morsel_rows, batch->num_rows() - start);
        Morsel morsel{seq++, batch->Slice(start, length), EvalContext{first_row + start, length, nullptr}};
        if (source_rows) {
          morsel.rows.source_rows =
              std::static_pointer_cast<arrow::Int64Array>(source_rows->Slice(start, length));
        }
        if (stats_) {
          stats_->morsels_emitted++;
          stats_->rows_emitted += morsel.batch->num_rows();
        }
        Schedule(0, 0, std::move(morsel));
        if (batch->num_rows() == 0) break;
      }
      return arrow::Status::OK();
    };
    auto st = pipeline_->source->Produce(emit);
    if (!st.ok() && !st.IsCancelled()) Fail(st);
    std::lock_guard<std::mutex> lock(mutex_);
    source_finished_ = true;
    done_.notify_all();
  }

  // Blocks while the pipeline is full (backpressure); false when the query stopped.
  bool AcquirePermit() {
    while (!stop_.load()) {
      if (permits_.try_acquire_for(std::chrono::milliseconds(20))) {
        std::lock_guard<std::mutex> lock(mutex_);
        ++in_flight_;
        if (stats_ && in_flight_ > stats_->max_morsels_in_flight) stats_->max_morsels_in_flight = in_flight_;
        return true;
      }
    }
    return false;
  }

  // The permit returns under the lock, after the count drops, so the count never exceeds the bound;
  // nothing touches `this` after the unlock (the waiting thread may destroy it then).
  void ReleasePermit() {
    std::lock_guard<std::mutex> lock(mutex_);
    --in_flight_;
    permits_.release();
    if (in_flight_ == 0) done_.notify_all();
  }

  void Fail(const arrow::Status& status) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_.ok()) error_ = status;
    stop_ = true;
  }

  // Runs the morsel through segment `seg` from operator `op` on, hopping executors as needed.
  void Schedule(size_t seg, size_t op, Morsel morsel) {
    auto& ops = pipeline_->segments[seg]->ops;
    arrow::internal::Executor* executor = op < ops.size() ? ops[op]->executor() : compute_;
    const int64_t seq = morsel.seq;
    auto st = executor->Spawn([this, seg, op, executor, m = std::move(morsel)]() mutable {
      Step(seg, op, executor, std::move(m));
    });
    if (!st.ok()) {
      Fail(st);
      Drop(seg, seq);
    }
  }

  // A morsel that will not reach the sink still passes the re-order buffer (empty), so the morsels
  // behind it are released too; otherwise a failed query would wait for them forever.
  void Drop(size_t seg, int64_t seq) {
    Morsel dropped;
    dropped.seq = seq;
    Deliver(seg, std::move(dropped));
  }

  void Step(size_t seg, size_t op, arrow::internal::Executor* executor, Morsel morsel) {
    auto& segment = *pipeline_->segments[seg];
    for (; op < segment.ops.size(); ++op) {
      if (segment.ops[op]->executor() != executor) return Schedule(seg, op, std::move(morsel));
      if (stop_.load() && !error_ok()) return Drop(seg, morsel.seq);
      morsel.rows.num_rows = morsel.batch->num_rows();
      auto result = segment.ops[op]->Execute(morsel.batch, &morsel.rows);
      if (!result.ok()) {
        Fail(result.status());
        return Drop(seg, morsel.seq);
      }
      morsel.batch = std::move(*result);
    }
    Deliver(seg, std::move(morsel));
  }

  bool error_ok() {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_.ok();
  }

  // Hands the morsel to the segment's sink in source order; forwards sink output to the next segment.
  void Deliver(size_t seg, Morsel morsel) {
    auto& segment = *pipeline_->segments[seg];
    std::vector<Morsel> forward;
    int64_t released = 0;
    {
      std::lock_guard<std::mutex> lock(segment.mutex);
      segment.pending.emplace(morsel.seq, std::move(morsel));
      while (!segment.pending.empty() && segment.pending.begin()->first == segment.next_seq) {
        Morsel next = std::move(segment.pending.begin()->second);
        segment.pending.erase(segment.pending.begin());
        ++segment.next_seq;
        if (!next.batch || segment.sink->Done() || !error_ok()) {
          ++released;
          continue;
        }
        auto out = segment.sink->Push(next.batch);
        if (!out.ok()) {
          Fail(out.status());
          ++released;
          continue;
        }
        if (segment.sink->Done()) stop_ = true;  // e.g. limit reached: stop reading
        if (out->has_value() && seg + 1 < pipeline_->segments.size()) {
          // A limit keeps a prefix of the morsel, so its row description stays valid.
          forward.push_back(Morsel{segment.next_out_seq++, std::move(**out), next.rows});
        } else {
          ++released;
        }
      }
    }
    for (auto& m : forward) Schedule(seg + 1, 0, std::move(m));
    for (int64_t i = 0; i < released; ++i) ReleasePermit();
  }

  Pipeline* pipeline_;
  arrow::internal::Executor* compute_;
  arrow::internal::Executor* io_;
  std::counting_semaphore<> permits_;
  ExecutionStats* stats_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable done_;
  bool source_finished_ = false;
  int64_t in_flight_ = 0;
  arrow::Status error_;
};

}  // namespace

arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> ExecutePlan(const PhysicalPlanPtr& plan,
                                                                            const ExecutionConfig& raw_config,
                                                                            ExecutionStats* stats) {
  const ExecutionConfig config = raw_config.Resolved();
  Pipeline pipeline;
  pipeline.morsel_rows = config.morsel_size_rows;
  ARROW_RETURN_NOT_OK(BuildNode(*plan, config, &pipeline));
  if (plan->kind != PhysicalKind::kWriteParquet) {
    // Every other root is collected; a limit at the root still needs a collecting pipeline after it.
    if (pipeline.segments.empty() || pipeline.segments.back()->sink) {
      pipeline.segments.push_back(std::make_unique<Segment>());
    }
    pipeline.segments.back()->sink = std::make_unique<CollectSink>();
  }
  if (!pipeline.source) return arrow::Status::Invalid("plan has no source");
  PipelineRun run(&pipeline, config, stats);
  return run.Run();
}

}  // namespace ketch
