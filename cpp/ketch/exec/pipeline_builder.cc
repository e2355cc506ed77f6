#include "ketch/exec/pipeline_builder.h"

namespace ketch::exec {

/// Bytes of one batch a video scan decodes: the morsel size the executor aims for when morsels
/// grow (half the budget shared by the morsels in flight), between 1 and 64 MiB.
int64_t PipelineBuilder::VideoBatchBytes() const {
  const int64_t in_flight = std::max<int64_t>(1, config_.max_morsels_in_flight);
  return std::clamp<int64_t>(memory_->budget() / (2 * in_flight), 1LL << 20, 64LL << 20);
}

arrow::Status PipelineBuilder::Build(const PhysicalNode& node, Pipeline* pipeline) {
  // Each operator kind builds its own pieces (a source, intermediate operators, a sink, or the
  // pipelines that feed it), as DuckDB's PhysicalOperator::BuildPipelines does.
  switch (node.kind) {
    case PhysicalKind::kInMemoryScan:
      return BuildInMemoryScan(node, pipeline);
    case PhysicalKind::kIntoBatches:
      return BuildIntoBatches(node, pipeline);
    case PhysicalKind::kRepartition:
      return BuildRepartition(node, pipeline);
    case PhysicalKind::kIntoPartitions:
      return BuildIntoPartitions(node, pipeline);
    case PhysicalKind::kScan:
      return BuildScan(node, pipeline);
    case PhysicalKind::kProject:
    case PhysicalKind::kUdfProject:
      return BuildProject(node, pipeline);
    case PhysicalKind::kFilter:
      return BuildFilter(node, pipeline);
    case PhysicalKind::kExplode:
      return BuildExplode(node, pipeline);
    case PhysicalKind::kSample:
      return BuildSample(node, pipeline);
    case PhysicalKind::kMonotonicId:
      return BuildMonotonicId(node, pipeline);
    case PhysicalKind::kLimit:
      return BuildLimit(node, pipeline);
    case PhysicalKind::kWrite:
      return BuildWrite(node, pipeline);
    case PhysicalKind::kSort:
      return BuildSort(node, pipeline);
    case PhysicalKind::kTopN:
      return BuildTopN(node, pipeline);
    case PhysicalKind::kWindow:
      return BuildWindow(node, pipeline);
    case PhysicalKind::kAggregate:
      return BuildAggregate(node, pipeline);
    case PhysicalKind::kHashJoin:
      return BuildHashJoin(node, pipeline);
    case PhysicalKind::kCrossJoin:
      return BuildCrossJoin(node, pipeline);
    case PhysicalKind::kConcat:
      return BuildConcat(node, pipeline);
  }
  return arrow::Status::NotImplemented("physical node");
}

arrow::Status PipelineBuilder::BuildInMemoryScan(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
  pipeline->source =
      std::make_unique<InMemorySource>(logical.batches(), logical.batch_partitions(), logical.first_row());
  return arrow::Status::OK();
}

arrow::Status PipelineBuilder::BuildIntoBatches(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
  // An ordered re-chunk into exact batches, each a partition of its own.
  ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
  auto& segment = Current(pipeline);
  segment.rechunk = std::make_unique<Rechunk>();
  segment.rechunk->min_rows = segment.rechunk->max_rows = logical.partitioning().batch_size;
  segment.rechunk->into_batches = true;
  pipeline->incoming_rows = logical.partitioning().batch_size;
  return arrow::Status::OK();
}

arrow::Status PipelineBuilder::BuildRepartition(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
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

arrow::Status PipelineBuilder::BuildIntoPartitions(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
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

arrow::Status PipelineBuilder::BuildScan(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
  pipeline->source = std::make_unique<ScanSource>(logical.scan(), logical.schema(), config_.morsel_size_rows,
                                                  compute_, config_.num_compute_threads + 1,
                                                  IoPool(config_.num_io_threads), VideoBatchBytes());
  return arrow::Status::OK();
}

arrow::Status PipelineBuilder::BuildProject(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
  ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
  ARROW_ASSIGN_OR_RAISE(
      auto op,
      ProjectOperator::Make(
          logical.exprs(), logical.schema(),
          node.io_bound && node.kind == PhysicalKind::kProject ? IoPool(config_.num_io_threads) : compute_,
          node.kind == PhysicalKind::kUdfProject ? node.concurrency : 0));
  op->set_grows_bytes(node.grows_bytes);
  AddOperator(pipeline, std::move(op), node);
  return arrow::Status::OK();
}

arrow::Status PipelineBuilder::BuildFilter(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
  ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
  AddOperator(pipeline, std::make_unique<FilterOperator>(logical.predicate(), compute_), node);
  return arrow::Status::OK();
}

arrow::Status PipelineBuilder::BuildExplode(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
  ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
  AddOperator(pipeline,
              std::make_unique<ExplodeOperator>(logical.explode_columns(), logical.schema(), compute_), node,
              /*grows_rows=*/true);
  return arrow::Status::OK();
}

arrow::Status PipelineBuilder::BuildSample(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
  if (logical.sample().size >= 0) {
    auto sink = std::make_unique<SampleSizeSink>(logical.schema(), logical.sample().size,
                                                 logical.sample().with_replacement, logical.sample().seed,
                                                 config_.morsel_size_rows, memory_);
    ARROW_ASSIGN_OR_RAISE(auto* sampled, StreamInto(*node.inputs[0], std::move(sink), nullptr));
    pipeline->source = std::make_unique<SinkOutputSource>(sampled);
    return arrow::Status::OK();
  }
  ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
  AddOperator(pipeline,
              std::make_unique<SampleOperator>(logical.sample().fraction, logical.sample().with_replacement,
                                               logical.sample().seed, compute_),
              node, /*grows_rows=*/logical.sample().with_replacement);
  return arrow::Status::OK();
}

arrow::Status PipelineBuilder::BuildMonotonicId(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
  ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
  SetSink(pipeline, std::make_unique<MonotonicIdSink>(logical.schema()));
  return arrow::Status::OK();
}

arrow::Status PipelineBuilder::BuildLimit(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
  ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
  SetSink(pipeline, std::make_unique<LimitSink>(logical.limit(), logical.offset()));
  return arrow::Status::OK();
}

arrow::Status PipelineBuilder::BuildWrite(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
  ARROW_RETURN_NOT_OK(Build(*node.inputs[0], pipeline));
  ARROW_ASSIGN_OR_RAISE(auto sink, WriteFilesSink::Make(logical.write(), logical.inputs()[0]->schema()));
  SetSink(pipeline, std::move(sink));
  return arrow::Status::OK();
}

arrow::Status PipelineBuilder::BuildSort(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
  // Runs are sorted in parallel (one per morsel) and merged by the sink, when the merge can
  // compare the key types; otherwise the sink sorts everything at once.
  const bool parallel_runs = CanMergeSortKeys(logical.sort(), *logical.schema());
  auto sink = std::make_unique<SortSink>(logical.sort(), logical.schema(), config_.morsel_size_rows, memory_,
                                         config_.spill_dir, parallel_runs);
  std::unique_ptr<IntermediateOperator> runs;
  if (parallel_runs) runs = std::make_unique<SortRunOperator>(logical.sort(), compute_);
  ARROW_ASSIGN_OR_RAISE(auto* sorted, StreamInto(*node.inputs[0], std::move(sink), std::move(runs)));
  pipeline->source = std::make_unique<SinkOutputSource>(sorted);
  return arrow::Status::OK();
}

arrow::Status PipelineBuilder::BuildTopN(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
  // Each morsel is cut to its own best rows in parallel; the sink keeps the best overall.
  const LogicalPlan& sort = *logical.inputs()[0];
  auto sink = std::make_unique<TopNSink>(sort.sort(), logical.schema(), logical.limit(), logical.offset(),
                                         config_.morsel_size_rows, memory_);
  auto runs = std::make_unique<TopNRunOperator>(sort.sort(), logical.limit_end(), compute_);
  ARROW_ASSIGN_OR_RAISE(auto* top, StreamInto(*node.inputs[0], std::move(sink), std::move(runs)));
  pipeline->source = std::make_unique<SinkOutputSource>(top);
  return arrow::Status::OK();
}

arrow::Status PipelineBuilder::BuildWindow(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
  auto sink = std::make_unique<WindowSink>(logical.window_spec(), logical.window_functions(),
                                           logical.inputs()[0]->schema(), logical.schema(),
                                           config_.morsel_size_rows, memory_, config_.spill_dir);
  ARROW_ASSIGN_OR_RAISE(auto* windowed, StreamInto(*node.inputs[0], std::move(sink), nullptr));
  pipeline->source = std::make_unique<SinkOutputSource>(windowed);
  return arrow::Status::OK();
}

arrow::Status PipelineBuilder::BuildAggregate(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
  // Full: partial states per morsel, merged and finished by the sink. Partial phase: the
  // same, the sink's output the merged states. Final phase: the input is partial states.
  const AggregatePhase phase = logical.aggregate().phase;
  const auto& input_schema =
      phase == AggregatePhase::kFinal ? logical.aggregate().source_schema : logical.inputs()[0]->schema();
  // Partial phase: the operator may find grouping does not pay and tell the sink to skip
  // its merge (high-cardinality keys; see AggregatePartialOperator).
  std::shared_ptr<std::atomic<bool>> skip;
  if (phase == AggregatePhase::kPartial) skip = std::make_shared<std::atomic<bool>>(false);
  std::unique_ptr<IntermediateOperator> partial;
  if (phase != AggregatePhase::kFinal) {
    partial = std::make_unique<AggregatePartialOperator>(logical.aggregate(), input_schema, compute_, skip);
  }
  auto final_sink = std::make_unique<AggregateFinalSink>(logical.aggregate(), input_schema, logical.schema(),
                                                         config_.morsel_size_rows, memory_, config_.spill_dir,
                                                         /*finish=*/phase != AggregatePhase::kPartial, skip);
  ARROW_ASSIGN_OR_RAISE(auto* sink, StreamInto(*node.inputs[0], std::move(final_sink), std::move(partial)));
  pipeline->source = std::make_unique<SinkOutputSource>(sink);
  return arrow::Status::OK();
}

arrow::Status PipelineBuilder::BuildHashJoin(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
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
    ARROW_ASSIGN_OR_RAISE(
        auto* left_sink,
        StreamInto(*node.inputs[0], std::make_unique<JoinInputSink>(partitioner, spec.left_on, left_schema,
                                                                    memory_, config_.spill_dir)));
    auto* left = static_cast<JoinInputSink*>(left_sink);
    JoinTablesOptions options{spec, left_schema, right_schema, logical.schema(), false, false};
    if (!left->spilled()) {
      ARROW_ASSIGN_OR_RAISE(auto build, left->All());
      ARROW_ASSIGN_OR_RAISE(auto table, JoinHashTable::Build(build, spec.left_on, key_types));
      ARROW_RETURN_NOT_OK(Build(*node.inputs[1], pipeline));
      AddOperator(pipeline,
                  std::make_unique<HashJoinProbeOperator>(table, options, compute_, /*build_is_left=*/true),
                  ProbeNode(node, *table), /*grows_rows=*/true);
      return arrow::Status::OK();
    }
    // The left input spilled after all: collect the right one too and join partition by partition.
    auto right_pipeline = std::make_unique<Pipeline>();
    right_pipeline->morsel_rows = config_.morsel_size_rows;
    ARROW_RETURN_NOT_OK(Build(*node.inputs[1], right_pipeline.get()));
    auto right_sink =
        std::make_unique<JoinInputSink>(partitioner, spec.right_on, right_schema, memory_, config_.spill_dir);
    JoinInputSink* right = right_sink.get();
    SetSink(right_pipeline.get(), std::move(right_sink));
    stages.push_back(PipelineStage{std::move(right_pipeline), nullptr});
    ARROW_RETURN_NOT_OK(run_stage_(stages.back()));
    pipeline->source = std::make_unique<HashJoinSource>(left, right, spec, left_schema, right_schema,
                                                        logical.schema(), config_.morsel_size_rows);
    return arrow::Status::OK();
  }
  // The build side (right) runs first.
  ARROW_ASSIGN_OR_RAISE(
      auto* right_sink,
      StreamInto(*node.inputs[1], std::make_unique<JoinInputSink>(partitioner, spec.right_on, right_schema,
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
  auto left_sink =
      std::make_unique<JoinInputSink>(partitioner, spec.left_on, left_schema, memory_, config_.spill_dir);
  JoinInputSink* left = left_sink.get();
  SetSink(probe.get(), std::move(left_sink));
  stages.push_back(PipelineStage{std::move(probe), nullptr});
  ARROW_RETURN_NOT_OK(run_stage_(stages.back()));
  pipeline->source = std::make_unique<HashJoinSource>(left, right, spec, left_schema, right_schema,
                                                      logical.schema(), config_.morsel_size_rows);
  return arrow::Status::OK();
}

arrow::Status PipelineBuilder::BuildCrossJoin(const PhysicalNode& node, Pipeline* pipeline) {
  const LogicalPlan& logical = *node.logical;
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
  AddOperator(
      pipeline,
      std::make_unique<CrossJoinOperator>(CrossJoinSide{rows, node.build_left}, logical.schema(), compute_),
      streamed, /*grows_rows=*/true);
  return arrow::Status::OK();
}

arrow::Status PipelineBuilder::BuildConcat(const PhysicalNode& node, Pipeline* pipeline) {
  // The second input's partitions follow the first's.
  ARROW_ASSIGN_OR_RAISE(auto first, Materialize(*node.inputs[0], std::make_unique<CollectSink>()));
  ARROW_ASSIGN_OR_RAISE(auto second, Materialize(*node.inputs[1], std::make_unique<CollectSink>()));
  pipeline->source = std::make_unique<MaterializedSource>(std::vector{first, second});
  return arrow::Status::OK();
}

/// The join node with a probe morsel size that bounds each probe's output: a probe row yields
/// up to `max_matches` rows (a hot key), so probe morsels get morsel_size / max_matches rows (at
/// least 16), keeping outputs near a morsel (and the query interruptible) when keys repeat.
PhysicalNode PipelineBuilder::ProbeNode(const PhysicalNode& node, const JoinHashTable& table) const {
  PhysicalNode probe = node;
  const int64_t fan_out = std::max<int64_t>(1, table.max_matches());
  if (fan_out > 1) {
    probe.max_morsel_rows =
        std::clamp<int64_t>(config_.morsel_size_rows / fan_out, 16, config_.morsel_size_rows);
  }
  return probe;
}

/// Ends the pipeline with `sink` (after any streaming sink already there, e.g. a limit).
void PipelineBuilder::SetSink(Pipeline* pipeline, std::unique_ptr<StreamingSink> sink) {
  if (pipeline->segments.empty() || pipeline->segments.back()->closed()) {
    pipeline->segments.push_back(std::make_unique<Segment>());
  }
  pipeline->segments.back()->sink = std::move(sink);
}

Segment& PipelineBuilder::Current(Pipeline* pipeline) {
  if (pipeline->segments.empty() || pipeline->segments.back()->closed()) {
    pipeline->segments.push_back(std::make_unique<Segment>());
  }
  return *pipeline->segments.back();
}

/// Appends `op` for `node`, honouring the node's morsel size range: while morsels still arrive as
/// the source cut them, the source cuts smaller ones; otherwise (after a re-chunk, an explode or a
/// join) and whenever the node needs a minimum (a UDF's batch size), an ordered re-chunk step
/// goes in front of the operator. `grows_rows`: the operator may output more rows than it got.
void PipelineBuilder::AddOperator(Pipeline* pipeline, std::unique_ptr<IntermediateOperator> op,
                                  const PhysicalNode& node, bool grows_rows) {
  const int64_t min = node.min_morsel_rows;
  const int64_t max = node.max_morsel_rows;
  if (max > 0 && pipeline->incoming_rows == 0) pipeline->morsel_rows = std::min(pipeline->morsel_rows, max);
  const int64_t arriving = pipeline->incoming_rows > 0 ? pipeline->incoming_rows : pipeline->morsel_rows;
  // The pieces of a streaming operator share their morsel's seq: a second one in the same
  // segment would split them again, so it starts a segment of its own.
  bool second_stream = false;
  if (AsStreaming(*op) && !pipeline->segments.empty() && !pipeline->segments.back()->closed()) {
    for (const auto& other : pipeline->segments.back()->ops) second_stream |= AsStreaming(*other) != nullptr;
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
arrow::Result<std::shared_ptr<MaterializedBatches>> PipelineBuilder::Materialize(
    const PhysicalNode& node, std::unique_ptr<StreamingSink> sink) {
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
arrow::Result<StreamingSink*> PipelineBuilder::StreamInto(const PhysicalNode& node,
                                                          std::unique_ptr<StreamingSink> sink,
                                                          std::unique_ptr<IntermediateOperator> last_op) {
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

}  // namespace ketch::exec
