#include "ketch/exec/pipeline_run.h"

namespace ketch::exec {

PipelineRun::PipelineRun(Pipeline* pipeline, const ExecutionConfig& config, ExecutionStats* stats,
                         int32_t index, MemoryManager* memory, bool auto_in_flight, uint64_t query_id)
    : pipeline_(pipeline),
      memory_(memory),
      compute_(ComputePool(config.num_compute_threads)),
      io_(IoPool(config.num_io_threads)),
      in_flight_bound_(MorselsInFlight(*pipeline, config, auto_in_flight)),
      permits_(in_flight_bound_),
      stats_(stats),
      query_id_(query_id) {
  // Morsels of a segment whose operators may grow them (downloads, decoded images, UDF results)
  // are sized so that all morsels in flight fit in half the budget.
  target_morsel_bytes_ = std::max<int64_t>(kMinTargetMorselBytes, memory_->budget() / (2 * in_flight_bound_));
  for (const auto& segment : pipeline_->segments) {
    auto sizing = std::make_unique<SegmentSizing>();
    for (const auto& op : segment->ops) sizing->adaptive |= op->grows_bytes();
    sizing_.push_back(std::move(sizing));
  }
  if (!stats_) return;
  source_metrics_ = stats_->Register(pipeline_->source->name(), index);
  pipeline_->source->set_scan_metrics(&stats_->scan);
  for (const auto& segment : pipeline_->segments) {
    std::vector<OperatorMetrics*> ops;
    for (const auto& op : segment->ops) ops.push_back(stats_->Register(op->name(), index));
    op_metrics_.push_back(std::move(ops));
    sink_metrics_.push_back(stats_->Register(segment->end_name(), index));
    if (segment->sink) segment->sink->set_memory_tracker(&sink_metrics_.back()->memory);
  }
}

/// Runs the pipeline to its end; finalizes its sinks (all but the last when `finalize_last` is
/// false: a consumer pipeline streams that one's output) and returns the last one's output.
arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> PipelineRun::Run(bool finalize_last) {
  TaskStarted();
  auto spawned = io_->Spawn([this] {
    RunSource();
    TaskDone();
  });
  if (!spawned.ok()) return spawned;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // Every task of ours has returned too: nothing touches this run after Run() returns.
    done_.wait(lock, [this] { return source_finished_ && in_flight_ == 0 && active_tasks_ == 0; });
  }
  if (!error_.ok()) return error_;
  const QueryScope query_scope(query_id_);  // sinks may evaluate expressions when finalizing
  std::vector<std::shared_ptr<arrow::RecordBatch>> output;
  for (size_t i = 0; i < pipeline_->segments.size(); ++i) {
    if (!finalize_last && i + 1 == pipeline_->segments.size()) break;
    if (!pipeline_->segments[i]->sink) continue;
    CpuTimer timer(stats_ ? sink_metrics_[i] : nullptr);
    auto& sink = *pipeline_->segments[i]->sink;
    ARROW_ASSIGN_OR_RAISE(output, GuardExceptions("sink", [&] { return sink.Finalize(); }));
  }
  if (stats_ && !sink_metrics_.empty()) {
    for (const auto& batch : output) {
      sink_metrics_.back()->rows_out += batch->num_rows();
      sink_metrics_.back()->bytes_out += BatchBytes(*batch);
    }
  }
  return output;
}

void PipelineRun::RunSource() {
  const QueryScope query_scope(query_id_);
  int64_t seq = 0;
  auto emit = [&](std::shared_ptr<arrow::RecordBatch> batch, int64_t first_row,
                  std::shared_ptr<arrow::Int64Array> source_rows, int64_t partition) -> arrow::Status {
    // Re-chunk into morsels; an empty batch still travels (it carries the schema to the sink).
    int64_t length = 0;
    for (int64_t start = 0; start < batch->num_rows() || (start == 0 && batch->num_rows() == 0);
         start += length) {
      if (!AcquirePermit()) return arrow::Status::Cancelled("query finished or failed");
      length = std::min(AdaptiveRows(0, pipeline_->morsel_rows), batch->num_rows() - start);
      Morsel morsel{seq++, batch->Slice(start, length), EvalContext{first_row + start, length, nullptr}, {}};
      morsel.partition = partition;
      // Backpressure on bytes too: wait while the morsels in flight fill the budget.
      // Admitted alone when it is the only morsel of this pipeline in flight (the budget is held
      // by blocking sinks' state or re-chunk buffers that wait for more input).
      morsel.memory = memory_->Acquire(
          BatchBytes(*morsel.batch), [this] { return stop_.load(); },
          source_metrics_ ? &source_metrics_->memory : nullptr, [this] { return in_flight_.load() <= 1; });
      if (stop_.load()) {
        --seq;  // never delivered
        ReleasePermit();
        return arrow::Status::Cancelled("query finished or failed");
      }
      if (source_rows) {
        morsel.rows.source_rows =
            std::static_pointer_cast<arrow::Int64Array>(source_rows->Slice(start, length));
      }
      if (stats_) {
        stats_->morsels_emitted++;
        stats_->rows_emitted += morsel.batch->num_rows();
        Count(source_metrics_, 0, morsel.batch);
      }
      Schedule(0, 0, std::move(morsel));
      if (batch->num_rows() == 0) break;
    }
    return arrow::Status::OK();
  };
  arrow::Status st;
  const int64_t decode_before = stats_ ? stats_->scan.decode_cpu_ns.load() : 0;
  {
    CpuTimer timer(source_metrics_);
    st = GuardExceptions("source", [&] { return pipeline_->source->Produce(emit); });
  }
  // Row groups a scan decoded on the compute pool count as the scan's CPU time.
  if (source_metrics_) source_metrics_->cpu_ns += stats_->scan.decode_cpu_ns.load() - decode_before;
  if (!st.ok() && !st.IsCancelled()) Fail(st);
  InputComplete(0, seq);
  std::lock_guard<std::mutex> lock(mutex_);
  source_finished_ = true;
  done_.notify_all();
}

// Blocks while the pipeline is full (backpressure); false when the query stopped.
bool PipelineRun::AcquirePermit() {
  while (!stop_.load()) {
    if (Cancelled()) return false;
    if (permits_.try_acquire_for(std::chrono::milliseconds(20))) {
      std::lock_guard<std::mutex> lock(mutex_);
      ++in_flight_;
      if (stats_ && in_flight_ > stats_->max_morsels_in_flight)
        stats_->max_morsels_in_flight = in_flight_.load();
      return true;
    }
  }
  return false;
}

// The permit returns under the lock, after the count drops, so the count never exceeds the bound;
// nothing touches `this` after the unlock (the waiting thread may destroy it then).
void PipelineRun::TaskStarted() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++active_tasks_;
}

// The last thing a task does; the run may be destroyed right after the unlock.
void PipelineRun::TaskDone() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--active_tasks_ == 0) done_.notify_all();
}

// True once the user asked to stop (records the error the query then fails with).
bool PipelineRun::Cancelled() {
  if (!stats_ || !stats_->cancel_requested.load()) return false;
  Fail(arrow::Status::Cancelled("query interrupted"));
  return true;
}

void PipelineRun::ReleasePermits(int64_t n) {
  if (n <= 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  in_flight_ -= n;
  permits_.release(n);
  if (in_flight_ == 0) done_.notify_all();
}

// The first error wins; it also raises the query's cancel flag, so calls that wait on user code
// or on the network (UDFs, downloads) give up instead of finishing work nobody will read.
//
// `first_row`: the first source row of the failing morsel, when known. Morsels fail in parallel;
// a later error replaces the recorded one when it comes from earlier rows (and is not a
// consequence of the cancellation), so the error names the first bad row as often as possible.
void PipelineRun::Fail(const arrow::Status& status, int64_t first_row) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_.ok() || (first_row < error_row_ && !status.IsCancelled())) {
    error_ = status;
    error_row_ = first_row;
  }
  stop_ = true;
  if (stats_) stats_->stop_calls = true;
}

// Runs the morsel through segment `seg` from operator `op` on, hopping executors as needed.
void PipelineRun::Schedule(size_t seg, size_t op, Morsel morsel) {
  auto& ops = pipeline_->segments[seg]->ops;
  arrow::internal::Executor* executor = op < ops.size() ? ops[op]->executor() : compute_;
  Morsel header;  // what a dropped morsel needs to pass the re-order buffer
  header.seq = morsel.seq;
  header.sub = morsel.sub;
  header.last_sub = morsel.last_sub;
  header.permits = morsel.permits;
  header.stream_pending = morsel.stream_pending;
  TaskStarted();
  auto st = executor->Spawn([this, seg, op, executor, m = std::move(morsel)]() mutable {
    Step(seg, op, executor, std::move(m));
    TaskDone();
  });
  if (!st.ok()) {
    TaskDone();
    Fail(st);
    Deliver(seg, std::move(header));
  }
}

// A morsel that will not reach the sink still passes the re-order buffer (empty), so the morsels
// behind it are released too; otherwise a failed query would wait for them forever. Frees the
// morsel's data and memory first: once the last permit returns, the run may end and its memory
// manager go away.
void PipelineRun::Drop(size_t seg, Morsel&& morsel) {
  morsel.memory.Release();
  morsel.batch.reset();
  Deliver(seg, std::move(morsel));
}

void PipelineRun::Step(size_t seg, size_t op, arrow::internal::Executor* executor, Morsel morsel) {
  const QueryScope query_scope(query_id_);
  auto& segment = *pipeline_->segments[seg];
  for (; op < segment.ops.size(); ++op) {
    if (segment.ops[op]->executor() != executor) return Schedule(seg, op, std::move(morsel));
    // After an error, morsels of earlier source rows still run (they may hold the first bad row,
    // which the error should name); later ones are dropped.
    if ((stop_.load() && !BeforeError(FirstRow(morsel))) || Cancelled()) return Drop(seg, std::move(morsel));
    morsel.rows.num_rows = morsel.batch->num_rows();
    morsel.rows.cancelled = stats_ ? &stats_->stop_calls : nullptr;
    morsel.rows.memory_budget_bytes = memory_->budget();
    OperatorMetrics* metrics = stats_ ? op_metrics_[seg][op] : nullptr;
    arrow::Result<std::shared_ptr<arrow::RecordBatch>> result;
    if (const auto* streaming = AsStreaming(*segment.ops[op])) {
      result = ExecuteStream(seg, op, *streaming, executor, &morsel, metrics);
    } else {
      CpuTimer timer(metrics);
      result =
          GuardExceptions("operator", [&] { return segment.ops[op]->Execute(morsel.batch, &morsel.rows); });
    }
    if (!result.ok() && result.status().IsCancelled() && stop_.load() && error_ok()) {
      return Drop(seg, std::move(morsel));  // a stream stopped: the query needs no more rows
    }
    if (result.ok()) Count(metrics, morsel.rows.num_rows, *result);
    if (!result.ok()) {
      Fail(result.status(), FirstRow(morsel));
      return Drop(seg, std::move(morsel));
    }
    // The output is charged in place of the input (a decoded image weighs more than its file).
    const int64_t out_bytes = BatchBytes(**result);
    if (segment.ops[op]->grows_bytes() && morsel.rows.num_rows > 0) {
      Observe(seg, static_cast<double>(out_bytes) / static_cast<double>(morsel.rows.num_rows));
    }
    morsel.memory = memory_->Reserve(out_bytes, metrics ? &metrics->memory : nullptr);
    morsel.batch = std::move(*result);
  }
  Deliver(seg, std::move(morsel));
}

// Runs a streaming operator (a lazy generator UDF) on `morsel`: each piece but the last goes on
// through the rest of the segment as a morsel of its own (same seq, next sub); the last one is
// returned, `morsel` becoming the stream's last piece. A piece waits for an in-flight permit
// like a source morsel, except when its stream is the segment's oldest (the next to reach the
// segment's end) and none of its pieces is on the way: then it goes on without one, so the
// pieces of later morsels, waiting behind it with their permits, can never stall it.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> PipelineRun::ExecuteStream(
    size_t seg, size_t op, const StreamingOperator& streaming, arrow::internal::Executor* executor,
    Morsel* morsel, OperatorMetrics* metrics) {
  auto& segment = *pipeline_->segments[seg];
  auto pending = std::make_shared<std::atomic<int64_t>>(0);
  int64_t sub = 0;
  const int64_t seq = morsel->seq;
  const int64_t partition = morsel->partition;
  auto emit = [&](std::shared_ptr<arrow::RecordBatch> piece, EvalContext rows) -> arrow::Status {
    int64_t permits = 0;
    while (true) {
      if (stop_.load() || Cancelled()) return arrow::Status::Cancelled("query finished or failed");
      if (permits_.try_acquire_for(std::chrono::milliseconds(20))) {
        std::lock_guard<std::mutex> lock(mutex_);
        ++in_flight_;
        permits = 1;
        break;
      }
      if (pending->load() == 0) {
        std::lock_guard<std::mutex> lock(segment.mutex);
        if (segment.next_seq == seq) break;  // the oldest: goes on without a permit
      }
    }
    Morsel m;
    m.seq = seq;
    m.sub = sub++;
    m.last_sub = false;
    m.permits = permits;
    m.partition = partition;
    m.stream_pending = pending;
    pending->fetch_add(1);
    Count(metrics, 0, piece);
    m.memory = memory_->Reserve(BatchBytes(*piece), metrics ? &metrics->memory : nullptr);
    m.batch = std::move(piece);
    m.rows = std::move(rows);
    Step(seg, op + 1, executor, std::move(m));
    return arrow::Status::OK();
  };
  const int64_t max_rows = pipeline_->morsel_rows;
  const int64_t max_bytes = std::clamp<int64_t>(target_morsel_bytes_, kMinTargetMorselBytes, 64LL << 20);
  auto result = GuardExceptions("operator", [&] {
    return streaming.ExecuteStream(morsel->batch, &morsel->rows, max_rows, max_bytes, emit);
  });
  morsel->sub = sub;
  morsel->last_sub = true;
  if (result.ok()) morsel->rows.num_rows = (*result)->num_rows();
  return result;
}

// The first source row of a morsel (max when it has none).
int64_t PipelineRun::FirstRow(const Morsel& morsel) {
  const bool has_rows = morsel.batch && morsel.batch->num_rows() > 0 &&
                        (!morsel.rows.source_rows || morsel.rows.source_rows->length() > 0);
  return has_rows ? morsel.rows.SourceRow(0) : std::numeric_limits<int64_t>::max();
}

// True while no error is recorded, or the recorded one comes from rows after `first_row`.
bool PipelineRun::BeforeError(int64_t first_row) {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_.ok() || first_row < error_row_;
}

bool PipelineRun::error_ok() {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_.ok();
}

// Tells segment `seg` how many morsels its upstream sent in all (the source, or the previous
// segment once it finished), so it can flush a re-chunk remainder and finish in turn.
void PipelineRun::InputComplete(size_t seg, int64_t total) {
  if (seg >= pipeline_->segments.size()) return;
  {
    std::lock_guard<std::mutex> lock(pipeline_->segments[seg]->mutex);
    pipeline_->segments[seg]->total_in = total;
  }
  Deliver(seg, std::nullopt);
}

// Hands the morsel to the segment's sink (or re-chunk step) in source order; forwards output to
// the next segment. Without a morsel, only checks whether the segment's input is complete.
void PipelineRun::Deliver(size_t seg, std::optional<Morsel> morsel) {
  const QueryScope query_scope(query_id_);
  auto& segment = *pipeline_->segments[seg];
  std::vector<Morsel> forward;
  int64_t released = 0;
  std::optional<int64_t> finished_total;
  std::unique_lock<std::mutex> handing_on;  // see below
  {
    std::lock_guard<std::mutex> lock(segment.mutex);
    if (morsel) {
      const std::pair<int64_t, int64_t> key{morsel->seq, morsel->sub};
      segment.pending.emplace(key, std::move(*morsel));
    }
    while (!segment.pending.empty() &&
           segment.pending.begin()->first == std::make_pair(segment.next_seq, segment.next_sub)) {
      Morsel next = std::move(segment.pending.begin()->second);
      segment.pending.erase(segment.pending.begin());
      if (next.stream_pending) {
        next.stream_pending->fetch_sub(1);
        next.stream_pending.reset();
      }
      if (next.last_sub) {
        ++segment.next_seq;
        segment.next_sub = 0;
      } else {
        ++segment.next_sub;
      }
      next.sub = 0;
      next.last_sub = true;
      if (segment.rechunk) {
        RechunkPush(segment, std::move(next), &forward, &released);
        continue;
      }
      if (!next.batch || segment.sink->Done() || !error_ok()) {
        released += next.permits;
        continue;
      }
      OperatorMetrics* metrics = stats_ ? sink_metrics_[seg] : nullptr;
      arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> out;
      if (next.partition != segment.sink_partition) {
        segment.sink_partition = next.partition;
        auto began = segment.sink->BeginPartition(next.partition);
        if (!began.ok()) {
          Fail(began);
          released += next.permits;
          continue;
        }
      }
      {
        CpuTimer timer(metrics);
        segment.sink->NoteNextPosition(next.seq, next.sub);
        out = GuardExceptions("sink", [&] { return segment.sink->Push(next.batch); });
      }
      if (out.ok()) Count(metrics, next.batch->num_rows(), out->has_value() ? **out : nullptr);
      if (!out.ok()) {
        Fail(out.status());
        released += next.permits;
        continue;
      }
      if (segment.sink->Done()) stop_ = true;  // e.g. limit reached: stop reading
      if (out->has_value() && seg + 1 < pipeline_->segments.size()) {
        // A limit keeps a slice of the morsel (a prefix, or past its offset's rows): the row
        // description is cut to that slice.
        EvalContext rows = next.rows;
        const int64_t kept = (**out)->num_rows();
        const int64_t start = segment.sink->LastOutputStart();
        rows.num_rows = kept;
        if (!rows.source_rows) rows.row_offset += start;
        if (rows.source_rows && rows.source_rows->length() != kept) {
          rows.source_rows =
              std::static_pointer_cast<arrow::Int64Array>(rows.source_rows->Slice(start, kept));
        }
        forward.push_back(Morsel{segment.next_out_seq++, std::move(**out), std::move(rows),
                                 std::move(next.memory), next.permits,
                                 segment.sink->KeepsPartitions() ? next.partition : 0});
      } else {
        released += next.permits;
      }
    }
    if (!segment.finished && segment.total_in >= 0 && segment.next_seq == segment.total_in) {
      segment.finished = true;
      if (segment.rechunk) RechunkFlush(segment, &forward);
      finished_total = segment.next_out_seq;
    }
    // Morsels go on to the next segment in the order they were cut: two threads delivering at
    // once would otherwise race to schedule theirs, and a single-threaded UDF downstream (a
    // FIFO pool) would run a later batch first while the stage after it waits, in its re-order
    // buffer, for the earlier one. The hand-on lock is taken before the segment's is released.
    if (!forward.empty()) handing_on = std::unique_lock<std::mutex>(segment.hand_on_mutex);
  }
  for (auto& m : forward) Schedule(seg + 1, 0, std::move(m));
  if (handing_on.owns_lock()) handing_on.unlock();
  ReleasePermits(released);
  if (finished_total) InputComplete(seg + 1, *finished_total);
}

}  // namespace ketch::exec
