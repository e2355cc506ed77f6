#include "ketch/distributed/stage_planner.h"

namespace ketch::distributed {

bool IsPartitionLocal(LogicalKind kind) {
  return kind == LogicalKind::kProject || kind == LogicalKind::kFilter || kind == LogicalKind::kExplode ||
         kind == LogicalKind::kSample;
}

namespace {

bool IsSource(LogicalKind kind) { return kind == LogicalKind::kScan || kind == LogicalKind::kInMemorySource; }

}  // namespace

std::optional<HashExchange> PlanHashExchange(const LogicalPlan& node) {
  switch (node.kind()) {
    case LogicalKind::kAggregate: {
      if (node.aggregate().group_by.empty()) return std::nullopt;  // one global group
      return HashExchange{{node.aggregate().group_by}, -1};
    }
    case LogicalKind::kJoin: {
      const JoinSpec& spec = node.join();
      if (spec.left_on.empty() || spec.left_on.size() != spec.right_on.size()) return std::nullopt;
      const auto& left = *node.inputs()[0]->schema();
      const auto& right = *node.inputs()[1]->schema();
      for (size_t i = 0; i < spec.left_on.size(); ++i) {
        auto l = left.GetFieldByName(spec.left_on[i]);
        auto r = right.GetFieldByName(spec.right_on[i]);
        // Keys of different types are cast before they are compared: their hashes may differ.
        if (!l || !r || !l->type()->Equals(*r->type())) return std::nullopt;
      }
      return HashExchange{{spec.left_on, spec.right_on}, -1};
    }
    case LogicalKind::kWindow: {
      // Rows of one window partition meet in one bucket; no partition_by: one bucket for all.
      const auto& keys = node.window_spec().partition_by;
      if (keys.empty()) return HashExchange{{std::vector<std::string>{}}, 1};
      return HashExchange{{keys}, -1};
    }
    case LogicalKind::kRepartition: {
      const PartitionSpec& spec = node.partitioning();
      if (spec.by.empty()) return std::nullopt;  // random partitioning: not a hash exchange
      return HashExchange{{spec.by}, spec.num_partitions};
    }
    default:
      return std::nullopt;
  }
}

std::string LogicalKindName(LogicalKind kind) {
  switch (kind) {
    case LogicalKind::kInMemorySource:
      return "InMemorySource";
    case LogicalKind::kScan:
      return "Scan";
    case LogicalKind::kProject:
      return "Project";
    case LogicalKind::kFilter:
      return "Filter";
    case LogicalKind::kLimit:
      return "Limit";
    case LogicalKind::kWrite:
      return "Write";
    case LogicalKind::kSort:
      return "Sort";
    case LogicalKind::kAggregate:
      return "Aggregate";
    case LogicalKind::kJoin:
      return "Join";
    case LogicalKind::kExplode:
      return "Explode";
    case LogicalKind::kConcat:
      return "Concat";
    case LogicalKind::kSample:
      return "Sample";
    case LogicalKind::kRepartition:
      return "Repartition";
    case LogicalKind::kIntoPartitions:
      return "IntoPartitions";
    case LogicalKind::kIntoBatches:
      return "IntoBatches";
    case LogicalKind::kWindow:
      return "Window";
  }
  return "Unknown";
}

arrow::Result<LogicalPlanPtr> PartitionFragment(const LogicalPlanPtr& fragment, int64_t partition) {
  if (IsSource(fragment->kind())) {
    if (fragment->kind() == LogicalKind::kInMemorySource) {
      const auto& partitions = fragment->batch_partitions();
      std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
      const int64_t count = partitions.empty() ? 1 : partitions.back() + 1;
      if (partition < 0 || partition >= count) {
        return arrow::Status::Invalid("partition ", partition, " of an in-memory source with ", count);
      }
      for (size_t i = 0; i < fragment->batches().size(); ++i) {
        if ((partitions.empty() ? 0 : partitions[i]) == partition) batches.push_back(fragment->batches()[i]);
      }
      return LogicalPlan::InMemory(fragment->schema(), std::move(batches));
    }
    ScanInfo info = fragment->scan();
    if (!info.tasks) return arrow::Status::Invalid("a scan must have its scan tasks before it is split");
    const int64_t count = info.tasks->num_tasks();
    if (count == 0 && partition == 0) return fragment;  // everything pruned: one empty task
    if (partition < 0 || partition >= count) {
      return arrow::Status::Invalid("partition ", partition, " of a scan with ", count, " scan tasks");
    }
    info.tasks = std::make_shared<ScanTasks>(info.tasks->OnlyTask(partition));
    return LogicalPlan::Scan(std::move(info));
  }
  ARROW_ASSIGN_OR_RAISE(auto input, PartitionFragment(fragment->inputs()[0], partition));
  std::vector<LogicalPlanPtr> inputs = fragment->inputs();
  inputs[0] = std::move(input);
  return fragment->WithInputs(std::move(inputs));
}

}  // namespace ketch::distributed
