#include "ketch/exec/executor.h"

#include "ketch/exec/pipeline_builder.h"
#include "ketch/exec/pipeline_run.h"

// Runs a physical plan: PipelineBuilder cuts it into pipelines (pipeline_builder.cc), PipelineRun
// runs each (pipeline_run.cc), inputs before their consumers.

namespace ketch {

using exec::Pipeline;
using exec::PipelineBuilder;
using exec::PipelineRun;
using exec::PipelineStage;

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
