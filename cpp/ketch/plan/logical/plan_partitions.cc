#include <algorithm>
#include <optional>

#include "ketch/plan/logical/logical_plan.h"

// Plan properties computed without running the plan (beside plan_stats.cc): the number of
// partitions a plan produces and its depth.

namespace ketch {

int32_t LogicalPlan::depth() const {
  int32_t known = depth_.load(std::memory_order_relaxed);
  if (known > 0) return known;
  // Iterative post-order over the nodes whose depth is not known yet (no recursion: this is what
  // guards the recursive walks against deep plans).
  std::vector<std::pair<const LogicalPlan*, bool>> stack{{this, false}};
  while (!stack.empty()) {
    auto [node, expanded] = stack.back();
    stack.pop_back();
    if (node->depth_.load(std::memory_order_relaxed) > 0) continue;
    if (!expanded) {
      stack.emplace_back(node, true);
      for (const auto& input : node->inputs_) {
        if (input->depth_.load(std::memory_order_relaxed) == 0) stack.emplace_back(input.get(), false);
      }
      continue;
    }
    int32_t d = 1;
    for (const auto& input : node->inputs_)
      d = std::max(d, input->depth_.load(std::memory_order_relaxed) + 1);
    node->depth_.store(d, std::memory_order_relaxed);
  }
  return depth_.load(std::memory_order_relaxed);
}

namespace {

// The exact number of rows a plan produces when known without running it (in-memory data, Parquet
// footers of an unfiltered scan, and what keeps or caps row counts above them).
std::optional<int64_t> KnownRows(const LogicalPlan& plan) {
  switch (plan.kind()) {
    case LogicalKind::kInMemorySource: {
      int64_t rows = 0;
      for (const auto& batch : plan.batches()) rows += batch->num_rows();
      return rows;
    }
    case LogicalKind::kScan: {
      const auto& scan = plan.scan();
      if (!scan.tasks || scan.filter ||
          (scan.format != FileFormat::kParquet && scan.format != FileFormat::kLance)) {
        return std::nullopt;
      }
      int64_t rows = 0;
      for (const auto& task : scan.tasks->tasks) {
        if (task.num_rows < 0) return std::nullopt;
        rows += task.num_rows;
      }
      return scan.limit >= 0 ? std::min(rows, scan.limit) : rows;
    }
    case LogicalKind::kProject:
    case LogicalKind::kSort:
    case LogicalKind::kWindow:
    case LogicalKind::kRepartition:
    case LogicalKind::kIntoPartitions:
    case LogicalKind::kIntoBatches:
    case LogicalKind::kMonotonicId:
      return KnownRows(*plan.inputs()[0]);
    case LogicalKind::kLimit: {
      auto rows = KnownRows(*plan.inputs()[0]);
      return rows ? std::min(std::max<int64_t>(0, *rows - plan.offset()), plan.limit())
                  : std::optional<int64_t>(std::nullopt);
    }
    case LogicalKind::kConcat: {
      auto a = KnownRows(*plan.inputs()[0]);
      auto b = KnownRows(*plan.inputs()[1]);
      return a && b ? std::optional<int64_t>(*a + *b) : std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

PartitionCount NumPartitions(const LogicalPlan& plan) {
  switch (plan.kind()) {
    case LogicalKind::kInMemorySource: {
      const auto& partitions = plan.batch_partitions();
      return {partitions.empty() ? 1 : partitions.back() + 1, true};
    }
    case LogicalKind::kScan:
      if (plan.scan().tasks) return {std::max<int64_t>(1, plan.scan().tasks->num_partitions()), true};
      return {std::max<int64_t>(1, static_cast<int64_t>(plan.scan().files.size())), false};
    case LogicalKind::kProject:
    case LogicalKind::kFilter:
    case LogicalKind::kExplode:
    case LogicalKind::kMonotonicId:
      return NumPartitions(*plan.inputs()[0]);
    case LogicalKind::kSample:
      if (plan.sample().size >= 0) return {1, true};  // one reservoir over all partitions
      return NumPartitions(*plan.inputs()[0]);
    case LogicalKind::kLimit:
    case LogicalKind::kSort:
    case LogicalKind::kWindow:
    case LogicalKind::kAggregate:
    case LogicalKind::kJoin:
    case LogicalKind::kWrite:
      return {1, true};
    case LogicalKind::kConcat: {
      const auto a = NumPartitions(*plan.inputs()[0]);
      const auto b = NumPartitions(*plan.inputs()[1]);
      return {a.count + b.count, a.exact && b.exact};
    }
    case LogicalKind::kRepartition:
      if (plan.partitioning().num_partitions < 0) return NumPartitions(*plan.inputs()[0]);
      return {plan.partitioning().num_partitions, true};
    case LogicalKind::kIntoPartitions:
      return {plan.partitioning().num_partitions, true};
    case LogicalKind::kIntoBatches: {
      const auto rows = KnownRows(*plan.inputs()[0]);
      const int64_t b = plan.partitioning().batch_size;
      if (rows) return {std::max<int64_t>(1, (*rows + b - 1) / b), true};
      return {1, false};
    }
  }
  return {1, false};
}

}  // namespace ketch
