#include "ketch/distributed/stage_planner.h"

#include <algorithm>

#include "ketch/expr/expr_analysis.h"

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
    case LogicalKind::kMonotonicId:
      return "MonotonicId";
  }
  return "Unknown";
}

namespace {

/// Scan tasks `first` .. `first + count - 1` of `tasks`, renumbered 0 .. count-1; the planning
/// counts (pruned files and row groups) stay with scan task 0 only, so that the metrics of every
/// fragment add up to the scan's (as ScanTasks::OnlyTask).
ScanTasks OnlyTasks(const ScanTasks& tasks, int64_t first, int64_t count) {
  ScanTasks out = tasks;
  out.tasks.clear();
  for (const auto& entry : tasks.tasks) {
    if (entry.group < first || entry.group >= first + count) continue;
    out.tasks.push_back(entry);
    out.tasks.back().group = static_cast<int32_t>(entry.group - first);
  }
  if (first != 0) out.files_pruned = out.row_groups_pruned = out.limit_skipped_row_groups = 0;
  return out;
}

/// Whether entries `a` and `b` are row ranges of the same Parquet row group.
bool SameSplitRowGroup(const ScanTask& a, const ScanTask& b) {
  return a.row_count >= 0 && b.row_count >= 0 && a.file == b.file && a.row_groups.size() == 1 &&
         b.row_groups.size() == 1 && a.row_groups[0] == b.row_groups[0];
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> SourceTaskRuns(const LogicalPlan& fragment) {
  const LogicalPlan* node = &fragment;
  while (!IsSource(node->kind()) && !node->inputs().empty()) node = node->inputs()[0].get();
  std::vector<std::pair<int64_t, int64_t>> runs;
  if (node->kind() == LogicalKind::kScan && node->scan().tasks &&
      node->scan().format == FileFormat::kParquet) {
    const auto& entries = node->scan().tasks->tasks;
    for (size_t i = 0; i < entries.size(); ++i) {
      const int64_t group = entries[i].group;
      if (!runs.empty() && runs.back().first + runs.back().second > group) continue;  // same task
      // A new scan task: part of the run before when its first entry continues the row group
      // the run's last entry splits.
      if (i > 0 && !runs.empty() && SameSplitRowGroup(entries[i - 1], entries[i])) {
        ++runs.back().second;
      } else {
        runs.emplace_back(group, 1);
      }
    }
    if (!runs.empty()) return runs;
  }
  auto [count, exact] = NumPartitions(*node);
  for (int64_t i = 0; i < std::max<int64_t>(1, count); ++i) runs.emplace_back(i, 1);
  return runs;
}

std::vector<std::shared_ptr<arrow::DataType>> JoinKeyCasts(const LogicalPlan& node) {
  std::vector<std::shared_ptr<arrow::DataType>> casts;
  if (node.kind() != LogicalKind::kJoin) return casts;
  const JoinSpec& spec = node.join();
  if (spec.left_on.size() != spec.right_on.size()) return casts;
  const auto& left = *node.inputs()[0]->schema();
  const auto& right = *node.inputs()[1]->schema();
  for (size_t i = 0; i < spec.left_on.size(); ++i) {
    auto l = left.GetFieldByName(spec.left_on[i]);
    auto r = right.GetFieldByName(spec.right_on[i]);
    if (!l || !r) return {};
    casts.push_back(JoinKeyCast(*l->type(), *r->type()));
  }
  return casts;
}

namespace {

constexpr int64_t kMinPieceRows = 64;  // rows of an in-memory source's piece, at least

// The in-memory source `source` cut into `pieces` partitions of consecutive rows.
arrow::Result<LogicalPlanPtr> CutInMemory(const LogicalPlan& source, int64_t pieces) {
  int64_t rows = 0;
  for (const auto& batch : source.batches()) rows += batch->num_rows();
  const int64_t size = rows / pieces;
  const int64_t extra = rows % pieces;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  std::vector<int64_t> partitions;
  int64_t piece = 0;
  int64_t left = size + (extra > 0 ? 1 : 0);  // rows still to place in `piece`
  for (const auto& batch : source.batches()) {
    int64_t offset = 0;
    while (offset < batch->num_rows()) {
      const int64_t take = std::min(left, batch->num_rows() - offset);
      batches.push_back(batch->Slice(offset, take));
      partitions.push_back(piece);
      offset += take;
      left -= take;
      if (left == 0 && piece + 1 < pieces) {
        ++piece;
        left = size + (piece < extra ? 1 : 0);
      }
    }
  }
  return LogicalPlan::InMemory(source.schema(), std::move(batches), std::move(partitions),
                               source.first_row());
}

bool CallsExpensive(const LogicalPlan& plan) {
  for (const auto& expr : plan.exprs()) {
    if (CallsExpensiveFunction(*expr)) return true;
  }
  return plan.predicate() && CallsExpensiveFunction(*plan.predicate());
}

// `keep_partitions`: an into_partitions above, through partition-local operators only: its cut
// depends on the source's partitions, which must stay the user's.
arrow::Result<LogicalPlanPtr> SplitBelow(const LogicalPlanPtr& plan, int64_t workers, bool expensive_above,
                                         bool keep_partitions) {
  if (plan->kind() == LogicalKind::kInMemorySource) {
    if (!expensive_above || keep_partitions) return plan;
    // A source with a partition per worker keeps the user's partitioning (into_partitions).
    if (NumPartitions(*plan).count >= std::max<int64_t>(1, workers)) return plan;
    int64_t rows = 0;
    for (const auto& batch : plan->batches()) rows += batch->num_rows();
    // No piece smaller than a heavy kernel's morsel (64 rows): a few rows are one batch, as the
    // user wrote them, and cutting them would only add tasks.
    const int64_t pieces = std::min(2 * std::max<int64_t>(1, workers), rows / kMinPieceRows);
    if (pieces <= NumPartitions(*plan).count) return plan;
    return CutInMemory(*plan, pieces);
  }
  // Only the partition-local operators above a source run in its tasks (the same pipeline).
  const bool local = plan->kind() == LogicalKind::kProject || plan->kind() == LogicalKind::kFilter ||
                     plan->kind() == LogicalKind::kExplode;
  const bool expensive = local && (expensive_above || CallsExpensive(*plan));
  const bool keep = plan->kind() == LogicalKind::kIntoPartitions || (local && keep_partitions);
  std::vector<LogicalPlanPtr> inputs;
  bool changed = false;
  for (const auto& input : plan->inputs()) {
    ARROW_ASSIGN_OR_RAISE(auto child, SplitBelow(input, workers, expensive, keep));
    changed |= child != input;
    inputs.push_back(std::move(child));
  }
  if (!changed) return plan;
  return plan->WithInputs(std::move(inputs));
}

}  // namespace

arrow::Result<LogicalPlanPtr> SplitInMemorySources(const LogicalPlanPtr& plan, int64_t workers) {
  return SplitBelow(plan, workers, false, false);
}

arrow::Result<LogicalPlanPtr> PartitionFragment(const LogicalPlanPtr& fragment, int64_t partition,
                                                int64_t count) {
  if (count < 1) return arrow::Status::Invalid("a fragment of ", count, " partitions");
  if (IsSource(fragment->kind())) {
    if (fragment->kind() == LogicalKind::kInMemorySource) {
      if (count != 1) return arrow::Status::Invalid("an in-memory source's fragments hold one partition");
      const auto& partitions = fragment->batch_partitions();
      std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
      const int64_t available = partitions.empty() ? 1 : partitions.back() + 1;
      if (partition < 0 || partition >= available) {
        return arrow::Status::Invalid("partition ", partition, " of an in-memory source with ", available);
      }
      int64_t first_row = fragment->first_row();  // the rows of the partitions before it
      for (size_t i = 0; i < fragment->batches().size(); ++i) {
        const int64_t batch_partition = partitions.empty() ? 0 : partitions[i];
        if (batch_partition == partition) batches.push_back(fragment->batches()[i]);
        if (batch_partition < partition) first_row += fragment->batches()[i]->num_rows();
      }
      return LogicalPlan::InMemory(fragment->schema(), std::move(batches), {}, first_row);
    }
    ScanInfo info = fragment->scan();
    if (!info.tasks) return arrow::Status::Invalid("a scan must have its scan tasks before it is split");
    const int64_t tasks = info.tasks->num_tasks();
    if (tasks == 0 && partition == 0 && count == 1) return fragment;  // everything pruned: one empty task
    if (partition < 0 || partition + count > tasks) {
      if (count == 1) {
        return arrow::Status::Invalid("partition ", partition, " of a scan with ", tasks, " scan tasks");
      }
      return arrow::Status::Invalid("partitions ", partition, "..", partition + count - 1, " of a scan with ",
                                    tasks, " scan tasks");
    }
    info.tasks = std::make_shared<ScanTasks>(OnlyTasks(*info.tasks, partition, count));
    return LogicalPlan::Scan(std::move(info));
  }
  ARROW_ASSIGN_OR_RAISE(auto input, PartitionFragment(fragment->inputs()[0], partition, count));
  std::vector<LogicalPlanPtr> inputs = fragment->inputs();
  inputs[0] = std::move(input);
  return fragment->WithInputs(std::move(inputs));
}

}  // namespace ketch::distributed
