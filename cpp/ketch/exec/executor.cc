#include "ketch/exec/executor.h"

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
#include "ketch/exec/intermediate/explode.h"
#include "ketch/exec/intermediate/project.h"
#include "ketch/exec/morsel.h"
#include "ketch/exec/sinks/sinks.h"
#include "ketch/exec/sinks/write_sink.h"
#include "ketch/exec/sources/in_memory_source.h"
#include "ketch/exec/sources/materialized_source.h"
#include "ketch/exec/sources/scan_source.h"
#include "ketch/exec/streaming_operator.h"
#include "ketch/io/spill_file.h"
#include "ketch/plan/physical/into_partitions_cuts.h"

namespace ketch {
namespace {

int64_t ThreadCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Adds the thread CPU time of a scope to a metric.
class CpuTimer {
 public:
  explicit CpuTimer(OperatorMetrics* metrics) : metrics_(metrics), start_(metrics ? ThreadCpuNanos() : 0) {}
  ~CpuTimer() {
    if (metrics_) metrics_->cpu_ns += ThreadCpuNanos() - start_;
  }

 private:
  OperatorMetrics* metrics_;
  int64_t start_;
};

void Count(OperatorMetrics* metrics, int64_t rows_in, const std::shared_ptr<arrow::RecordBatch>& out) {
  if (!metrics) return;
  metrics->morsels++;
  metrics->rows_in += rows_in;
  if (out) {
    metrics->rows_out += out->num_rows();
    metrics->bytes_out += BatchBytes(*out);
  }
}

struct Morsel {
  int64_t seq = 0;
  std::shared_ptr<arrow::RecordBatch> batch;
  EvalContext rows;       // which source rows the morsel holds
  MemoryPermit memory;    // the morsel's bytes, charged to the query's budget while in flight
  int64_t permits = 1;    // in-flight permits it carries (0 for extra pieces of a split morsel)
  int64_t partition = 0;  // the partition its rows belong to (Source::Emit)
  // A streaming operator (a lazy generator) turns one morsel into pieces: they share its `seq`,
  // are numbered by `sub` and reach the segment's end in that order; the last has `last_sub`.
  int64_t sub = 0;
  bool last_sub = true;
  // Pieces of the stream not yet through the segment's re-order buffer (the stream's own count).
  std::shared_ptr<std::atomic<int64_t>> stream_pending;
};

/// The state of an ordered re-chunk step: morsels arrive in source order and leave cut to
/// [min_rows, max_rows] rows (the last one of the input may be shorter). Rows of different
/// partitions never share a morsel (a partition's last morsel may be shorter), except in
/// `into_batches` mode, which cuts the whole stream into batches of exactly `max_rows` rows (only
/// the stream's last one shorter) and makes each batch a partition of its own (0, 1, 2, ...).
struct Rechunk {
  int64_t min_rows = 1;
  int64_t max_rows = 0;
  bool into_batches = false;
  int64_t partition = -1;  // of the buffered rows (-1: none yet)
  int64_t next_batch = 0;  // into_batches: the partition number of the next batch
  std::deque<Morsel> buffer;
  int64_t front_offset = 0;  // rows of buffer.front() already sent on
  int64_t buffered_rows = 0;
  int64_t buffered_bytes = 0;  // of the buffered morsels (whole, even when partly sent on)
  // into_partitions over an input of known partitions: morsels are sliced at the cuts and
  // relabelled as they pass, nothing held (IntoPartitionsCuts); empty outputs become empty batches.
  std::optional<IntoPartitionsCuts> cuts;
  std::shared_ptr<arrow::Schema> schema;  // of the empty batches
  int64_t in_partition = -1;              // input partition of the last morsel
  size_t piece = 0;                       // its piece being filled
  int64_t filled = 0;                     // rows in that piece so far
  int64_t started = 0;                    // output partitions begun (each has had a batch)
};

/// A run of stateless operators ending in an order-sensitive step: a sink, or a re-chunk step
/// whose output flows into the next segment.
struct Segment {
  std::vector<std::unique_ptr<IntermediateOperator>> ops;
  std::unique_ptr<StreamingSink> sink;
  std::unique_ptr<Rechunk> rechunk;
  // Re-order buffer in front of the sink, by (seq, sub).
  std::mutex mutex;
  std::mutex hand_on_mutex;  // held while the morsels cut under `mutex` are scheduled downstream
  std::map<std::pair<int64_t, int64_t>, Morsel> pending;
  int64_t next_seq = 0;
  int64_t next_sub = 0;
  int64_t next_out_seq = 0;
  int64_t total_in = -1;  // morsels that will arrive, once the upstream finished
  bool finished = false;
  int64_t sink_partition = 0;  // partition of the morsels the sink is receiving

  bool closed() const { return sink || rechunk; }
  std::string end_name() const {
    if (sink) return sink->name();
    if (rechunk->into_batches) return "IntoBatches[" + std::to_string(rechunk->max_rows) + "]";
    if (rechunk->cuts) return "IntoPartitions[" + std::to_string(rechunk->cuts->num_outputs) + ", streaming]";
    return "Rechunk[" + std::to_string(rechunk->min_rows) + ", " + std::to_string(rechunk->max_rows) + "]";
  }
};

/// Runtime operators of one pipeline: the source and the segments in flow order.
struct Pipeline {
  std::unique_ptr<Source> source;
  std::vector<std::unique_ptr<Segment>> segments;
  int64_t morsel_rows = 0;    // rows per morsel the source cuts
  int64_t incoming_rows = 0;  // most rows a morsel has at the pipeline's end; 0 = `morsel_rows`
};

/// A pipeline that runs before the one that reads its output: either materialized into `output`
/// (join and concat inputs), or streamed by the consumer's SinkOutputSource from the pipeline's
/// last sink (sort, aggregate; `output` is null and the sink is not finalized by the run).
struct PipelineStage {
  std::unique_ptr<Pipeline> pipeline;
  std::shared_ptr<MaterializedBatches> output;
};

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
  int64_t VideoBatchBytes() const {
    const int64_t in_flight = std::max<int64_t>(1, config_.max_morsels_in_flight);
    return std::clamp<int64_t>(memory_->budget() / (2 * in_flight), 1LL << 20, 64LL << 20);
  }

  arrow::Status Build(const PhysicalNode& node, Pipeline* pipeline) {
    const LogicalPlan& logical = *node.logical;
    switch (node.kind) {
      case PhysicalKind::kInMemoryScan:
        pipeline->source = std::make_unique<InMemorySource>(logical.batches(), logical.batch_partitions(),
                                                            logical.first_row());
        return arrow::Status::OK();
      case PhysicalKind::kIntoBatches: {
        // An ordered re-chunk into exact batches, each a partition of its own.
        ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
        auto& segment = Current(pipeline);
        segment.rechunk = std::make_unique<Rechunk>();
        segment.rechunk->min_rows = segment.rechunk->max_rows = logical.partitioning().batch_size;
        segment.rechunk->into_batches = true;
        pipeline->incoming_rows = logical.partitioning().batch_size;
        return arrow::Status::OK();
      }
      case PhysicalKind::kRepartition: {
        std::random_device seed;
        auto map = std::make_unique<PartitionIdOperator>(
            logical.partitioning().by, node.num_partitions,
            (static_cast<uint64_t>(seed()) << 32) ^ static_cast<uint64_t>(seed()), compute_);
        auto sink = std::make_unique<RepartitionSink>(node.num_partitions, logical.schema(),
                                                      config_.morsel_size_rows, memory_, config_.spill_dir);
        ARROW_ASSIGN_OR_RAISE(auto* out, StreamInto(*node.inputs[0], std::move(sink), std::move(map)));
        pipeline->source = std::make_unique<SinkOutputSource>(out);
        return arrow::Status::OK();
      }
      case PhysicalKind::kIntoPartitions: {
        if (auto cuts = StreamingIntoPartitionsCuts(*logical.inputs()[0], node.num_partitions)) {
          // Partitions known before the input runs: an ordered step slices and relabels morsels.
          ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
          auto& segment = Current(pipeline);
          segment.rechunk = std::make_unique<Rechunk>();
          segment.rechunk->cuts = std::move(*cuts);
          segment.rechunk->schema = logical.schema();
          return arrow::Status::OK();
        }
        auto sink = std::make_unique<IntoPartitionsSink>(node.num_partitions, logical.schema(),
                                                         config_.morsel_size_rows, memory_);
        ARROW_ASSIGN_OR_RAISE(auto* out, StreamInto(*node.inputs[0], std::move(sink)));
        pipeline->source = std::make_unique<SinkOutputSource>(out);
        return arrow::Status::OK();
      }
      case PhysicalKind::kScan:
        pipeline->source = std::make_unique<ScanSource>(
            logical.scan(), logical.schema(), config_.morsel_size_rows, compute_,
            config_.num_compute_threads + 1, IoPool(config_.num_io_threads), VideoBatchBytes());
        return arrow::Status::OK();
      case PhysicalKind::kProject:
      case PhysicalKind::kUdfProject: {
        ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
        ARROW_ASSIGN_OR_RAISE(
            auto op, ProjectOperator::Make(logical.exprs(), logical.schema(),
                                           node.io_bound && node.kind == PhysicalKind::kProject
                                               ? IoPool(config_.num_io_threads)
                                               : compute_,
                                           node.kind == PhysicalKind::kUdfProject ? node.concurrency : 0));
        op->set_grows_bytes(node.grows_bytes);
        AddOperator(pipeline, std::move(op), node);
        return arrow::Status::OK();
      }
      case PhysicalKind::kFilter:
        ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
        AddOperator(pipeline, std::make_unique<FilterOperator>(logical.predicate(), compute_), node);
        return arrow::Status::OK();
      case PhysicalKind::kExplode:
        ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
        AddOperator(pipeline,
                    std::make_unique<ExplodeOperator>(logical.explode_columns(), logical.schema(), compute_),
                    node, /*grows_rows=*/true);
        return arrow::Status::OK();
      case PhysicalKind::kSample:
        if (logical.sample().size >= 0) {
          auto sink = std::make_unique<SampleSizeSink>(
              logical.schema(), logical.sample().size, logical.sample().with_replacement,
              logical.sample().seed, config_.morsel_size_rows, memory_);
          ARROW_ASSIGN_OR_RAISE(auto* sampled, StreamInto(*node.inputs[0], std::move(sink), nullptr));
          pipeline->source = std::make_unique<SinkOutputSource>(sampled);
          return arrow::Status::OK();
        }
        ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
        AddOperator(
            pipeline,
            std::make_unique<SampleOperator>(logical.sample().fraction, logical.sample().with_replacement,
                                             logical.sample().seed, compute_),
            node, /*grows_rows=*/logical.sample().with_replacement);
        return arrow::Status::OK();
      case PhysicalKind::kMonotonicId:
        ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
        SetSink(pipeline, std::make_unique<MonotonicIdSink>(logical.schema()));
        return arrow::Status::OK();
      case PhysicalKind::kLimit:
        ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
        SetSink(pipeline, std::make_unique<LimitSink>(logical.limit(), logical.offset()));
        return arrow::Status::OK();
      case PhysicalKind::kWrite: {
        ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
        ARROW_ASSIGN_OR_RAISE(auto sink,
                              WriteFilesSink::Make(logical.write(), logical.inputs()[0]->schema()));
        SetSink(pipeline, std::move(sink));
        return arrow::Status::OK();
      }
      case PhysicalKind::kSort: {
        // Runs are sorted in parallel (one per morsel) and merged by the sink, when the merge can
        // compare the key types; otherwise the sink sorts everything at once.
        const bool parallel_runs = CanMergeSortKeys(logical.sort(), *logical.schema());
        auto sink = std::make_unique<SortSink>(logical.sort(), logical.schema(), config_.morsel_size_rows,
                                               memory_, config_.spill_dir, parallel_runs);
        std::unique_ptr<IntermediateOperator> runs;
        if (parallel_runs) runs = std::make_unique<SortRunOperator>(logical.sort(), compute_);
        ARROW_ASSIGN_OR_RAISE(auto* sorted, StreamInto(*node.inputs[0], std::move(sink), std::move(runs)));
        pipeline->source = std::make_unique<SinkOutputSource>(sorted);
        return arrow::Status::OK();
      }
      case PhysicalKind::kTopN: {
        // Each morsel is cut to its own best rows in parallel; the sink keeps the best overall.
        const LogicalPlan& sort = *logical.inputs()[0];
        auto sink = std::make_unique<TopNSink>(sort.sort(), logical.schema(), logical.limit(),
                                               logical.offset(), config_.morsel_size_rows, memory_);
        auto runs = std::make_unique<TopNRunOperator>(sort.sort(), logical.limit_end(), compute_);
        ARROW_ASSIGN_OR_RAISE(auto* top, StreamInto(*node.inputs[0], std::move(sink), std::move(runs)));
        pipeline->source = std::make_unique<SinkOutputSource>(top);
        return arrow::Status::OK();
      }
      case PhysicalKind::kWindow: {
        auto sink = std::make_unique<WindowSink>(logical.window_spec(), logical.window_functions(),
                                                 logical.inputs()[0]->schema(), logical.schema(),
                                                 config_.morsel_size_rows, memory_, config_.spill_dir);
        ARROW_ASSIGN_OR_RAISE(auto* windowed, StreamInto(*node.inputs[0], std::move(sink), nullptr));
        pipeline->source = std::make_unique<SinkOutputSource>(windowed);
        return arrow::Status::OK();
      }
      case PhysicalKind::kAggregate: {
        // Full: partial states per morsel, merged and finished by the sink. Partial phase: the
        // same, the sink's output the merged states. Final phase: the input is partial states.
        const AggregatePhase phase = logical.aggregate().phase;
        const auto& input_schema = phase == AggregatePhase::kFinal ? logical.aggregate().source_schema
                                                                   : logical.inputs()[0]->schema();
        // Partial phase: the operator may find grouping does not pay and tell the sink to skip
        // its merge (high-cardinality keys; see AggregatePartialOperator).
        std::shared_ptr<std::atomic<bool>> skip;
        if (phase == AggregatePhase::kPartial) skip = std::make_shared<std::atomic<bool>>(false);
        std::unique_ptr<IntermediateOperator> partial;
        if (phase != AggregatePhase::kFinal) {
          partial =
              std::make_unique<AggregatePartialOperator>(logical.aggregate(), input_schema, compute_, skip);
        }
        auto final_sink = std::make_unique<AggregateFinalSink>(
            logical.aggregate(), input_schema, logical.schema(), config_.morsel_size_rows, memory_,
            config_.spill_dir, /*finish=*/phase != AggregatePhase::kPartial, skip);
        ARROW_ASSIGN_OR_RAISE(auto* sink,
                              StreamInto(*node.inputs[0], std::move(final_sink), std::move(partial)));
        pipeline->source = std::make_unique<SinkOutputSource>(sink);
        return arrow::Status::OK();
      }
      case PhysicalKind::kHashJoin: {
        const auto& spec = logical.join();
        const auto& left_schema = logical.inputs()[0]->schema();
        const auto& right_schema = logical.inputs()[1]->schema();
        std::vector<std::shared_ptr<arrow::DataType>> key_types;
        for (size_t i = 0; i < spec.left_on.size(); ++i) {
          const auto& l = left_schema->GetFieldByName(spec.left_on[i])->type();
          auto cast = JoinKeyCast(*l, *right_schema->GetFieldByName(spec.right_on[i])->type());
          key_types.push_back(cast ? cast : l);
        }
        auto partitioner = std::make_shared<JoinPartitioner>(key_types);
        if (node.build_left) {
          // Inner join with a much smaller (estimated) left input: hash the left input, stream the right.
          ARROW_ASSIGN_OR_RAISE(auto* left_sink,
                                StreamInto(*node.inputs[0], std::make_unique<JoinInputSink>(
                                                                partitioner, spec.left_on, left_schema,
                                                                memory_, config_.spill_dir)));
          auto* left = static_cast<JoinInputSink*>(left_sink);
          JoinTablesOptions options{spec, left_schema, right_schema, logical.schema(), false, false};
          if (!left->spilled()) {
            ARROW_ASSIGN_OR_RAISE(auto build, left->All());
            ARROW_ASSIGN_OR_RAISE(auto table, JoinHashTable::Build(build, spec.left_on, key_types));
            ARROW_RETURN_NOT_OK(Build(*node.inputs[1], pipeline));
            AddOperator(
                pipeline,
                std::make_unique<HashJoinProbeOperator>(table, options, compute_, /*build_is_left=*/true),
                ProbeNode(node, *table), /*grows_rows=*/true);
            return arrow::Status::OK();
          }
          // The left input spilled after all: collect the right one too and join partition by partition.
          auto right_pipeline = std::make_unique<Pipeline>();
          right_pipeline->morsel_rows = config_.morsel_size_rows;
          ARROW_RETURN_NOT_OK(Build(*node.inputs[1], right_pipeline.get()));
          auto right_sink = std::make_unique<JoinInputSink>(partitioner, spec.right_on, right_schema, memory_,
                                                            config_.spill_dir);
          JoinInputSink* right = right_sink.get();
          SetSink(right_pipeline.get(), std::move(right_sink));
          stages.push_back(PipelineStage{std::move(right_pipeline), nullptr});
          ARROW_RETURN_NOT_OK(run_stage_(stages.back()));
          pipeline->source = std::make_unique<HashJoinSource>(left, right, spec, left_schema, right_schema,
                                                              logical.schema(), config_.morsel_size_rows);
          return arrow::Status::OK();
        }
        // The build side (right) runs first.
        ARROW_ASSIGN_OR_RAISE(auto* right_sink,
                              StreamInto(*node.inputs[1], std::make_unique<JoinInputSink>(
                                                              partitioner, spec.right_on, right_schema,
                                                              memory_, config_.spill_dir)));
        auto* right = static_cast<JoinInputSink*>(right_sink);
        JoinTablesOptions options{spec,
                                  left_schema,
                                  right_schema,
                                  logical.schema(),
                                  /*use_threads=*/false,
                                  /*build_on_smaller_side=*/false};
        // The left input's pipeline, built before choosing how it meets the build side.
        auto probe = std::make_unique<Pipeline>();
        probe->morsel_rows = config_.morsel_size_rows;
        ARROW_RETURN_NOT_OK(Build(*node.inputs[0], probe.get()));
        ARROW_ASSIGN_OR_RAISE(auto build, right->All());
        // The build side is hashed once; the left input then streams through this pipeline,
        // morsel by morsel, probing it in parallel.
        if (CanProbeInChunks(spec.how) && !right->spilled()) {
          ARROW_ASSIGN_OR_RAISE(auto table, JoinHashTable::Build(build, spec.right_on, key_types));
          *pipeline = std::move(*probe);
          AddOperator(pipeline, std::make_unique<HashJoinProbeOperator>(table, options, compute_),
                      ProbeNode(node, *table), /*grows_rows=*/true);
          return arrow::Status::OK();
        }
        // Right/outer joins, a spilled build side: collect (and spill) the left side too,
        // then join (partition by partition when spilled), probing in 256Ki-row chunks.
        auto left_sink = std::make_unique<JoinInputSink>(partitioner, spec.left_on, left_schema, memory_,
                                                         config_.spill_dir);
        JoinInputSink* left = left_sink.get();
        SetSink(probe.get(), std::move(left_sink));
        stages.push_back(PipelineStage{std::move(probe), nullptr});
        ARROW_RETURN_NOT_OK(run_stage_(stages.back()));
        pipeline->source = std::make_unique<HashJoinSource>(left, right, spec, left_schema, right_schema,
                                                            logical.schema(), config_.morsel_size_rows);
        return arrow::Status::OK();
      }
      case PhysicalKind::kCrossJoin: {
        // The smaller input (estimated) is collected into one batch; the other streams past it.
        const int materialized_input = node.build_left ? 0 : 1;
        const auto& materialized_schema = logical.inputs()[materialized_input]->schema();
        ARROW_ASSIGN_OR_RAISE(auto collected,
                              Materialize(*node.inputs[materialized_input], std::make_unique<CollectSink>()));
        ARROW_ASSIGN_OR_RAISE(auto table, collected->batches.empty()
                                              ? arrow::Table::MakeEmpty(materialized_schema)
                                              : arrow::Table::FromRecordBatches(collected->batches));
        ARROW_ASSIGN_OR_RAISE(auto rows, table->CombineChunksToBatch());
        PhysicalNode streamed = node;
        streamed.max_morsel_rows = CrossJoinStreamRows(config_.morsel_size_rows, rows->num_rows());
        ARROW_RETURN_NOT_OK(Build(*node.inputs[1 - materialized_input], pipeline));
        AddOperator(pipeline,
                    std::make_unique<CrossJoinOperator>(CrossJoinSide{rows, node.build_left},
                                                        logical.schema(), compute_),
                    streamed, /*grows_rows=*/true);
        return arrow::Status::OK();
      }
      case PhysicalKind::kConcat: {
        // The second input's partitions follow the first's.
        ARROW_ASSIGN_OR_RAISE(auto first, Materialize(*node.inputs[0], std::make_unique<CollectSink>()));
        ARROW_ASSIGN_OR_RAISE(auto second, Materialize(*node.inputs[1], std::make_unique<CollectSink>()));
        pipeline->source = std::make_unique<MaterializedSource>(std::vector{first, second});
        return arrow::Status::OK();
      }
    }
    return arrow::Status::NotImplemented("physical node");
  }

  /// The join node with a probe morsel size that bounds each probe's output: a probe row yields
  /// up to `max_matches` rows (a hot key), so probe morsels get morsel_size / max_matches rows (at
  /// least 16), keeping outputs near a morsel (and the query interruptible) when keys repeat.
  PhysicalNode ProbeNode(const PhysicalNode& node, const JoinHashTable& table) const {
    PhysicalNode probe = node;
    const int64_t fan_out = std::max<int64_t>(1, table.max_matches());
    if (fan_out > 1) {
      probe.max_morsel_rows =
          std::clamp<int64_t>(config_.morsel_size_rows / fan_out, 16, config_.morsel_size_rows);
    }
    return probe;
  }

  /// Ends the pipeline with `sink` (after any streaming sink already there, e.g. a limit).
  static void SetSink(Pipeline* pipeline, std::unique_ptr<StreamingSink> sink) {
    if (pipeline->segments.empty() || pipeline->segments.back()->closed()) {
      pipeline->segments.push_back(std::make_unique<Segment>());
    }
    pipeline->segments.back()->sink = std::move(sink);
  }

 private:
  Segment& Current(Pipeline* pipeline) {
    if (pipeline->segments.empty() || pipeline->segments.back()->closed()) {
      pipeline->segments.push_back(std::make_unique<Segment>());
    }
    return *pipeline->segments.back();
  }

  /// Appends `op` for `node`, honouring the node's morsel size range: while morsels still arrive as
  /// the source cut them, the source cuts smaller ones; otherwise (after a re-chunk, an explode or a
  /// join) and whenever the node needs a minimum (a UDF's batch size), an ordered re-chunk step
  /// goes in front of the operator. `grows_rows`: the operator may output more rows than it got.
  void AddOperator(Pipeline* pipeline, std::unique_ptr<IntermediateOperator> op, const PhysicalNode& node,
                   bool grows_rows = false) {
    const int64_t min = node.min_morsel_rows;
    const int64_t max = node.max_morsel_rows;
    if (max > 0 && pipeline->incoming_rows == 0) pipeline->morsel_rows = std::min(pipeline->morsel_rows, max);
    const int64_t arriving = pipeline->incoming_rows > 0 ? pipeline->incoming_rows : pipeline->morsel_rows;
    // The pieces of a streaming operator share their morsel's seq: a second one in the same
    // segment would split them again, so it starts a segment of its own.
    bool second_stream = false;
    if (AsStreaming(*op) && !pipeline->segments.empty() && !pipeline->segments.back()->closed()) {
      for (const auto& other : pipeline->segments.back()->ops)
        second_stream |= AsStreaming(*other) != nullptr;
    }
    if (min > 1 || (max > 0 && arriving > max) || second_stream) {
      auto& before = Current(pipeline);
      before.rechunk = std::make_unique<Rechunk>();
      before.rechunk->min_rows = std::max<int64_t>(min, 1);
      before.rechunk->max_rows = max > 0 ? max : std::max(min, arriving);
      pipeline->incoming_rows = before.rechunk->max_rows;
    }
    Current(pipeline).ops.push_back(std::move(op));
    if (grows_rows) pipeline->incoming_rows = std::numeric_limits<int64_t>::max();
  }

  // A pipeline computing `node`, ending in `sink` (with `last_op` before it), run before its
  // consumer, whose output is materialized.
  arrow::Result<std::shared_ptr<MaterializedBatches>> Materialize(const PhysicalNode& node,
                                                                  std::unique_ptr<StreamingSink> sink) {
    auto child = std::make_unique<Pipeline>();
    child->morsel_rows = config_.morsel_size_rows;
    ARROW_RETURN_NOT_OK(Build(node, child.get()));
    SetSink(child.get(), std::move(sink));
    auto output = std::make_shared<MaterializedBatches>();
    stages.push_back(PipelineStage{std::move(child), output});
    ARROW_RETURN_NOT_OK(run_stage_(stages.back()));
    return output;
  }

  // Like Materialize, but the consumer streams the blocking sink's output (ProduceOutput).
  arrow::Result<StreamingSink*> StreamInto(const PhysicalNode& node, std::unique_ptr<StreamingSink> sink,
                                           std::unique_ptr<IntermediateOperator> last_op = nullptr) {
    auto child = std::make_unique<Pipeline>();
    child->morsel_rows = config_.morsel_size_rows;
    ARROW_RETURN_NOT_OK(Build(node, child.get()));
    if (last_op) {
      // Per-morsel sort runs and partial aggregates cost a fixed setup each (an Acero plan, a
      // run to merge): after a UDF or a filter, coalesce small morsels first.
      PhysicalNode range;
      range.min_morsel_rows = std::min<int64_t>(kMinBlockingInputRows, config_.morsel_size_rows);
      range.max_morsel_rows = config_.morsel_size_rows;
      AddOperator(child.get(), std::move(last_op), range);
    }
    StreamingSink* raw = sink.get();
    SetSink(child.get(), std::move(sink));
    stages.push_back(PipelineStage{std::move(child), nullptr});
    ARROW_RETURN_NOT_OK(run_stage_(stages.back()));
    return raw;
  }

  const ExecutionConfig& config_;
  MemoryManager* memory_;
  arrow::internal::Executor* compute_;
  std::function<arrow::Status(PipelineStage&)> run_stage_;
};

/// Morsels a pipeline may hold at once: the configured bound; when that is the default (`auto_bound`),
/// raised so that every worker of its operators with workers of their own (a UDF's `concurrency`
/// threads or processes) can hold one while the compute pool works on others (else a UDF stage would
/// run below its concurrency). A bound the user set is kept.
int64_t MorselsInFlight(const Pipeline& pipeline, const ExecutionConfig& config, bool auto_bound) {
  if (!auto_bound) return config.max_morsels_in_flight;
  int64_t own = 0;
  for (const auto& segment : pipeline.segments) {
    for (const auto& op : segment->ops) own += op->own_workers();
  }
  return own == 0 ? config.max_morsels_in_flight
                  : std::max<int64_t>(config.max_morsels_in_flight, own + config.num_compute_threads + 2);
}

constexpr int64_t kMinTargetMorselBytes = 1LL << 20;
// Until a growing operator's output has been seen, its segment's morsels are 1/512 of their size
// (a download stage or a row-wise UDF starts with one row, a batch UDF with 16), so the first
// morsels in flight cannot blow the budget before anything is known.
constexpr int64_t kProbeDivisor = 512;

class PipelineRun {
 public:
  PipelineRun(Pipeline* pipeline, const ExecutionConfig& config, ExecutionStats* stats, int32_t index,
              MemoryManager* memory, bool auto_in_flight, uint64_t query_id)
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
    target_morsel_bytes_ =
        std::max<int64_t>(kMinTargetMorselBytes, memory_->budget() / (2 * in_flight_bound_));
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
  arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> Run(bool finalize_last = true) {
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

 private:
  void RunSource() {
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
        Morsel morsel{
            seq++, batch->Slice(start, length), EvalContext{first_row + start, length, nullptr}, {}};
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
  bool AcquirePermit() {
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
  void TaskStarted() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++active_tasks_;
  }

  // The last thing a task does; the run may be destroyed right after the unlock.
  void TaskDone() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--active_tasks_ == 0) done_.notify_all();
  }

  // True once the user asked to stop (records the error the query then fails with).
  bool Cancelled() {
    if (!stats_ || !stats_->cancel_requested.load()) return false;
    Fail(arrow::Status::Cancelled("query interrupted"));
    return true;
  }

  void ReleasePermits(int64_t n) {
    if (n <= 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    in_flight_ -= n;
    permits_.release(n);
    if (in_flight_ == 0) done_.notify_all();
  }
  void ReleasePermit() { ReleasePermits(1); }

  // The first error wins; it also raises the query's cancel flag, so calls that wait on user code
  // or on the network (UDFs, downloads) give up instead of finishing work nobody will read.
  //
  // `first_row`: the first source row of the failing morsel, when known. Morsels fail in parallel;
  // a later error replaces the recorded one when it comes from earlier rows (and is not a
  // consequence of the cancellation), so the error names the first bad row as often as possible.
  void Fail(const arrow::Status& status, int64_t first_row = std::numeric_limits<int64_t>::max()) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_.ok() || (first_row < error_row_ && !status.IsCancelled())) {
      error_ = status;
      error_row_ = first_row;
    }
    stop_ = true;
    if (stats_) stats_->stop_calls = true;
  }

  // Runs the morsel through segment `seg` from operator `op` on, hopping executors as needed.
  void Schedule(size_t seg, size_t op, Morsel morsel) {
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
  void Drop(size_t seg, Morsel&& morsel) {
    morsel.memory.Release();
    morsel.batch.reset();
    Deliver(seg, std::move(morsel));
  }

  void Step(size_t seg, size_t op, arrow::internal::Executor* executor, Morsel morsel) {
    const QueryScope query_scope(query_id_);
    auto& segment = *pipeline_->segments[seg];
    for (; op < segment.ops.size(); ++op) {
      if (segment.ops[op]->executor() != executor) return Schedule(seg, op, std::move(morsel));
      // After an error, morsels of earlier source rows still run (they may hold the first bad row,
      // which the error should name); later ones are dropped.
      if ((stop_.load() && !BeforeError(FirstRow(morsel))) || Cancelled())
        return Drop(seg, std::move(morsel));
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
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> ExecuteStream(size_t seg, size_t op,
                                                                   const StreamingOperator& streaming,
                                                                   arrow::internal::Executor* executor,
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
  static int64_t FirstRow(const Morsel& morsel) {
    const bool has_rows = morsel.batch && morsel.batch->num_rows() > 0 &&
                          (!morsel.rows.source_rows || morsel.rows.source_rows->length() > 0);
    return has_rows ? morsel.rows.SourceRow(0) : std::numeric_limits<int64_t>::max();
  }

  // True while no error is recorded, or the recorded one comes from rows after `first_row`.
  bool BeforeError(int64_t first_row) {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_.ok() || first_row < error_row_;
  }

  bool error_ok() {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_.ok();
  }

  // Tells segment `seg` how many morsels its upstream sent in all (the source, or the previous
  // segment once it finished), so it can flush a re-chunk remainder and finish in turn.
  void InputComplete(size_t seg, int64_t total) {
    if (seg >= pipeline_->segments.size()) return;
    {
      std::lock_guard<std::mutex> lock(pipeline_->segments[seg]->mutex);
      pipeline_->segments[seg]->total_in = total;
    }
    Deliver(seg, std::nullopt);
  }

  // Hands the morsel to the segment's sink (or re-chunk step) in source order; forwards output to
  // the next segment. Without a morsel, only checks whether the segment's input is complete.
  void Deliver(size_t seg, std::optional<Morsel> morsel) {
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

  // Re-chunk step (under the segment's lock). Buffered morsels hold no in-flight permit (else the
  // source could not send the rows that complete a batch); an output takes over the permit of the
  // morsel that completed it, so the morsels in flight behind the step stay bounded.
  void RechunkPush(Segment& segment, Morsel morsel, std::vector<Morsel>* forward, int64_t* released) {
    Rechunk& r = *segment.rechunk;
    if (!morsel.batch || !error_ok()) {
      *released += morsel.permits;
      return;
    }
    if (r.cuts) {
      CutIntoPartitions(segment, std::move(morsel), forward, released);
      return;
    }
    // Rows of another partition: what is buffered goes on first, as the last morsel(s) of its own.
    const bool new_partition = !r.into_batches && morsel.partition != r.partition;
    if (new_partition && r.buffered_rows > 0) RechunkFlush(segment, forward);
    if (morsel.batch->num_rows() == 0) {
      // An empty input still carries the schema through when nothing went on before it, and an
      // empty partition its number.
      if ((r.buffer.empty() && segment.next_out_seq == 0) || new_partition) {
        morsel.seq = segment.next_out_seq++;
        if (r.into_batches) morsel.partition = 0;
        r.partition = morsel.partition;
        forward->push_back(std::move(morsel));
      } else {
        *released += morsel.permits;
      }
      return;
    }
    r.partition = morsel.partition;
    int64_t permits = morsel.permits;
    morsel.permits = 0;
    r.buffered_rows += morsel.batch->num_rows();
    r.buffered_bytes += BatchBytes(*morsel.batch);
    r.buffer.push_back(std::move(morsel));
    // Under memory pressure (the buffer holds a quarter of the budget) a short morsel goes on
    // rather than waiting for min_rows: the source may be waiting for those very bytes.
    const int64_t max_rows = RechunkMaxRows(segment);
    while (r.buffered_rows >= r.min_rows ||
           (!r.into_batches && r.buffered_rows > 0 && r.buffered_bytes > memory_->budget() / 4)) {
      auto out = CutRechunk(r, std::min(r.buffered_rows, max_rows));
      if (!out.ok()) {
        Fail(out.status());
        break;
      }
      out->seq = segment.next_out_seq++;
      out->permits = permits;
      permits = 0;
      if (stats_) Count(sink_metrics_[SegmentIndex(segment)], out->batch->num_rows(), out->batch);
      forward->push_back(std::move(*out));
    }
    *released += permits;
  }

  // Streaming into_partitions: sends an empty batch for each output partition before `upto` that
  // has had none (an empty piece, or coalesced inputs without rows), so every output exists.
  void BeginOutputsUpTo(Segment& segment, int64_t upto, std::vector<Morsel>* forward) {
    Rechunk& r = *segment.rechunk;
    while (r.started < upto) {
      auto empty = arrow::RecordBatch::MakeEmpty(r.schema);
      if (!empty.ok()) {
        Fail(empty.status());
        return;
      }
      Morsel out;
      out.seq = segment.next_out_seq++;
      out.batch = std::move(*empty);
      out.permits = 0;
      out.partition = r.started++;
      forward->push_back(std::move(out));
    }
  }

  // Streaming into_partitions: the morsel's rows cut at the pieces of its input partition, each
  // slice labelled with its output partition (zero-copy); the morsel's permit and memory go with
  // its last slice.
  void CutIntoPartitions(Segment& segment, Morsel morsel, std::vector<Morsel>* forward, int64_t* released) {
    Rechunk& r = *segment.rechunk;
    const IntoPartitionsCuts& cuts = *r.cuts;
    const int64_t p = morsel.partition;
    if (p < 0 || p >= static_cast<int64_t>(cuts.pieces.size())) {
      Fail(arrow::Status::Invalid("into_partitions: input partition ", p, " was not planned (",
                                  cuts.pieces.size(), " input partitions)"));
      *released += morsel.permits;
      return;
    }
    if (p != r.in_partition) {
      r.in_partition = p;
      r.piece = 0;
      r.filled = 0;
    }
    const auto& pieces = cuts.pieces[static_cast<size_t>(p)];
    const int64_t rows = morsel.batch->num_rows();
    std::vector<std::pair<int64_t, int64_t>> slices;  // (offset, length) per output partition
    std::vector<int64_t> outputs;
    int64_t offset = 0;
    while (offset < rows) {
      int64_t take = rows - offset;
      if (pieces[r.piece] != IntoPartitionsCuts::kAllRows) {
        while (r.piece < pieces.size() && pieces[r.piece] == r.filled) {
          ++r.piece;
          r.filled = 0;
        }
        if (r.piece >= pieces.size()) {
          Fail(arrow::Status::Invalid("into_partitions: input partition ", p,
                                      " has more rows than its known count"));
          *released += morsel.permits;
          return;
        }
        take = std::min(take, pieces[r.piece] - r.filled);
      }
      slices.emplace_back(offset, take);
      outputs.push_back(cuts.first[static_cast<size_t>(p)] + static_cast<int64_t>(r.piece));
      r.filled += take;
      offset += take;
    }
    for (size_t k = 0; k < slices.size(); ++k) {
      const auto [start, length] = slices[k];
      BeginOutputsUpTo(segment, outputs[k], forward);
      Morsel out;
      out.seq = segment.next_out_seq++;
      out.batch = length == rows ? morsel.batch : morsel.batch->Slice(start, length);
      out.rows = EvalContext{morsel.rows.row_offset + start, length, nullptr};
      if (morsel.rows.source_rows) {
        out.rows.source_rows =
            std::static_pointer_cast<arrow::Int64Array>(morsel.rows.source_rows->Slice(start, length));
      }
      out.partition = outputs[k];
      r.started = std::max(r.started, outputs[k] + 1);
      const bool last = k + 1 == slices.size();
      out.permits = last ? morsel.permits : 0;
      if (last) out.memory = std::move(morsel.memory);
      if (stats_) Count(sink_metrics_[SegmentIndex(segment)], length, out.batch);
      forward->push_back(std::move(out));
    }
    if (slices.empty()) *released += morsel.permits;  // an empty morsel
  }

  // At the end of the input, sends on what the re-chunk step still holds (fewer than min rows).
  void RechunkFlush(Segment& segment, std::vector<Morsel>* forward) {
    Rechunk& r = *segment.rechunk;
    if (r.cuts) {
      BeginOutputsUpTo(segment, r.cuts->num_outputs, forward);
      return;
    }
    const int64_t max_rows = RechunkMaxRows(segment);
    while (r.buffered_rows > 0 && error_ok()) {
      auto out = CutRechunk(r, std::min(r.buffered_rows, max_rows));
      if (!out.ok()) {
        Fail(out.status());
        break;
      }
      out->seq = segment.next_out_seq++;
      out->permits = 0;
      if (stats_) Count(sink_metrics_[SegmentIndex(segment)], out->batch->num_rows(), out->batch);
      forward->push_back(std::move(*out));
    }
    r.buffer.clear();
    r.buffered_rows = 0;
    r.buffered_bytes = 0;
  }

  // Rows per morsel entering segment `seg`: `static_max`, or fewer when the segment's operators
  // are seen to produce so many bytes per row that a morsel would outgrow its share of the budget.
  // Before the first observation, its morsels are probes (kProbeDivisor).
  int64_t AdaptiveRows(size_t seg, int64_t static_max) const {
    if (seg >= sizing_.size() || !sizing_[seg]->adaptive || static_max <= 1) return static_max;
    const double per_row = sizing_[seg]->bytes_per_row.load();
    if (per_row <= 0) return std::max<int64_t>(1, static_max / kProbeDivisor);
    const double fit = static_cast<double>(target_morsel_bytes_) / per_row;
    return fit >= static_cast<double>(static_max) ? static_max
                                                  : std::max<int64_t>(1, static_cast<int64_t>(fit));
  }

  // A re-chunk step feeds the next segment; exact batches (a UDF's batch_size) are never cut.
  int64_t RechunkMaxRows(const Segment& segment) const {
    const Rechunk& r = *segment.rechunk;
    if (r.min_rows > 1 || r.into_batches) return r.max_rows;
    return AdaptiveRows(SegmentIndex(segment) + 1, r.max_rows);
  }

  // Records what a growing operator produced per input row: the estimate rises at once and
  // decays slowly (an estimate: concurrent updates may race harmlessly).
  void Observe(size_t seg, double bytes_per_row) {
    auto& estimate = sizing_[seg]->bytes_per_row;
    estimate.store(std::max(bytes_per_row, estimate.load() * 0.9));
  }

  size_t SegmentIndex(const Segment& segment) const {
    for (size_t i = 0; i < pipeline_->segments.size(); ++i) {
      if (pipeline_->segments[i].get() == &segment) return i;
    }
    return 0;
  }

  // Takes the first `rows` buffered rows as one morsel (zero-copy when they lie in one morsel).
  arrow::Result<Morsel> CutRechunk(Rechunk& r, int64_t rows) {
    std::vector<std::shared_ptr<arrow::RecordBatch>> pieces;
    std::vector<EvalContext> contexts;
    int64_t remaining = rows;
    while (remaining > 0) {
      Morsel& front = r.buffer.front();
      const int64_t available = front.batch->num_rows() - r.front_offset;
      const int64_t take = std::min(available, remaining);
      pieces.push_back(front.batch->Slice(r.front_offset, take));
      EvalContext ctx{front.rows.row_offset + r.front_offset, take, nullptr};
      if (front.rows.source_rows) {
        ctx.source_rows =
            std::static_pointer_cast<arrow::Int64Array>(front.rows.source_rows->Slice(r.front_offset, take));
      }
      contexts.push_back(std::move(ctx));
      remaining -= take;
      r.buffered_rows -= take;
      if (take == available) {
        r.buffered_bytes -= BatchBytes(*front.batch);
        r.buffer.pop_front();  // releases its memory permit
        r.front_offset = 0;
      } else {
        r.front_offset += take;
      }
    }
    Morsel out;
    if (pieces.size() == 1) {
      out.batch = std::move(pieces[0]);
      out.rows = std::move(contexts[0]);
    } else {
      ARROW_ASSIGN_OR_RAISE(out.batch, arrow::ConcatenateRecordBatches(pieces));
      arrow::Int64Builder source_rows;
      ARROW_RETURN_NOT_OK(source_rows.Reserve(rows));
      for (const auto& ctx : contexts) {
        for (int64_t i = 0; i < ctx.num_rows; ++i) source_rows.UnsafeAppend(ctx.SourceRow(i));
      }
      std::shared_ptr<arrow::Int64Array> array;
      ARROW_RETURN_NOT_OK(source_rows.Finish(&array));
      out.rows = EvalContext{contexts[0].row_offset, rows, std::move(array)};
    }
    out.rows.num_rows = rows;
    out.partition = r.into_batches ? r.next_batch++ : r.partition;
    out.memory = memory_->Reserve(BatchBytes(*out.batch));
    return out;
  }

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

}  // namespace

bool PlanHasBlockingSink(const PhysicalNode& node) {
  if (node.kind == PhysicalKind::kSort || node.kind == PhysicalKind::kTopN ||
      node.kind == PhysicalKind::kAggregate || node.kind == PhysicalKind::kWindow ||
      node.kind == PhysicalKind::kHashJoin || node.kind == PhysicalKind::kCrossJoin ||
      node.kind == PhysicalKind::kRepartition ||
      (node.kind == PhysicalKind::kSample && node.logical->sample().size >= 0)) {
    return true;
  }
  for (const auto& input : node.inputs) {
    if (PlanHasBlockingSink(*input)) return true;
  }
  return false;
}

arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> ExecutePlanInto(
    const PhysicalPlanPtr& plan, const ExecutionConfig& raw_config, ExecutionStats* stats,
    ResultConsumer* consumer) {
  const ExecutionConfig config = raw_config.Resolved();
  const bool auto_in_flight = raw_config.max_morsels_in_flight <= 0;
  MemoryManager memory(config.memory_budget_bytes);
  if (PlanHasBlockingSink(*plan)) ARROW_RETURN_NOT_OK(CheckSpillDirectory(config.spill_dir));
  struct MarkFinished {
    ExecutionStats* stats;
    ~MarkFinished() {
      if (stats) stats->finished = true;
    }
  } mark_finished{stats};
  static std::atomic<uint64_t> next_query_id{1};
  const uint64_t query_id = next_query_id.fetch_add(1);
  int32_t index = 0;
  auto run_stage = [&](PipelineStage& stage) -> arrow::Status {
    PipelineRun run(stage.pipeline.get(), config, stats, index++, &memory, auto_in_flight, query_id);
    ARROW_ASSIGN_OR_RAISE(auto output, run.Run(/*finalize_last=*/stage.output != nullptr));
    if (stage.output) {
      stage.output->batches = std::move(output);
      if (auto* collect = dynamic_cast<CollectSink*>(stage.pipeline->segments.back()->sink.get())) {
        stage.output->partitions = collect->partitions();
      }
    }
    return arrow::Status::OK();
  };
  PipelineBuilder builder(config, &memory, run_stage);
  Pipeline root;
  root.morsel_rows = config.morsel_size_rows;
  ARROW_RETURN_NOT_OK(builder.Build(*plan, &root));
  if (plan->kind != PhysicalKind::kWrite) {
    // Every other root is collected (or streamed to the consumer); a limit at the root still needs
    // a collecting segment after it.
    if (consumer) {
      PipelineBuilder::SetSink(&root, std::make_unique<ConsumerSink>(consumer));
    } else {
      PipelineBuilder::SetSink(&root, std::make_unique<CollectSink>());
    }
  }
  if (!root.source) return arrow::Status::Invalid("plan has no source");
  PipelineRun run(&root, config, stats, index, &memory, auto_in_flight, query_id);
  auto result = run.Run();
  if (stats) stats->peak_memory_bytes = memory.peak();
  if (result.ok() && consumer) {
    // A write's output (the written paths) goes to the consumer at the end.
    for (auto& batch : *result) ARROW_RETURN_NOT_OK(consumer->Consume(0, std::move(batch)));
    result->clear();
  }
  return result;
}

arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> ExecutePlan(const PhysicalPlanPtr& plan,
                                                                            const ExecutionConfig& config,
                                                                            ExecutionStats* stats) {
  return ExecutePlanInto(plan, config, stats, nullptr);
}

}  // namespace ketch
