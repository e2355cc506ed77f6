#include "ketch/plan/physical/into_partitions_cuts.h"

#include <algorithm>

namespace ketch {

namespace {

// Rows of each partition of `plan`, when known before it runs.
std::optional<std::vector<int64_t>> KnownPartitionRows(const LogicalPlan& plan) {
  switch (plan.kind()) {
    case LogicalKind::kInMemorySource: {
      const auto& partitions = plan.batch_partitions();
      std::vector<int64_t> rows(static_cast<size_t>(partitions.empty() ? 1 : partitions.back() + 1), 0);
      for (size_t i = 0; i < plan.batches().size(); ++i) {
        rows[static_cast<size_t>(partitions.empty() ? 0 : partitions[i])] += plan.batches()[i]->num_rows();
      }
      return rows;
    }
    case LogicalKind::kScan: {
      const auto& scan = plan.scan();
      if (!scan.tasks || scan.filter || scan.limit >= 0 ||
          (scan.format != FileFormat::kParquet && scan.format != FileFormat::kLance)) {
        return std::nullopt;
      }
      std::vector<int64_t> rows(static_cast<size_t>(std::max<int64_t>(1, scan.tasks->num_tasks())), 0);
      for (const auto& task : scan.tasks->tasks) {
        if (task.num_rows < 0) return std::nullopt;
        rows[static_cast<size_t>(task.group)] += task.num_rows;
      }
      return rows;
    }
    case LogicalKind::kProject:
      return KnownPartitionRows(*plan.inputs()[0]);
    case LogicalKind::kIntoPartitions: {
      auto inputs = KnownPartitionRows(*plan.inputs()[0]);
      if (!inputs) return std::nullopt;
      auto cuts = StreamingIntoPartitionsCuts(*plan.inputs()[0], plan.partitioning().num_partitions);
      if (!cuts) return std::nullopt;
      std::vector<int64_t> rows(static_cast<size_t>(cuts->num_outputs), 0);
      for (size_t i = 0; i < cuts->pieces.size() && i < inputs->size(); ++i) {
        for (size_t k = 0; k < cuts->pieces[i].size(); ++k) {
          const int64_t piece = cuts->pieces[i][k];
          rows[static_cast<size_t>(cuts->first[i]) + k] +=
              piece == IntoPartitionsCuts::kAllRows ? (*inputs)[i] : piece;
        }
      }
      return rows;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<IntoPartitionsCuts> StreamingIntoPartitionsCuts(const LogicalPlan& input,
                                                              int64_t num_partitions) {
  const PartitionCount count = NumPartitions(input);
  if (!count.exact || num_partitions < 1) return std::nullopt;
  const int64_t m = count.count;
  const int64_t n = num_partitions;
  IntoPartitionsCuts cuts;
  cuts.num_outputs = n;
  if (n < m) {  // output j gathers m / n adjacent inputs (one more for the first m % n)
    int64_t next = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t gathered = m / n + (j < m % n ? 1 : 0);
      for (int64_t i = next; i < next + gathered; ++i) {
        cuts.pieces.push_back({IntoPartitionsCuts::kAllRows});
        cuts.first.push_back(j);
      }
      next += gathered;
    }
    return cuts;
  }
  auto rows = KnownPartitionRows(input);
  if (!rows || static_cast<int64_t>(rows->size()) != m) return std::nullopt;
  int64_t out = 0;
  for (int64_t i = 0; i < m; ++i) {  // input i: n / m pieces (one more for the first n % m)
    const int64_t pieces = n / m + (i < n % m ? 1 : 0);
    const int64_t r = (*rows)[static_cast<size_t>(i)];
    std::vector<int64_t> lengths;
    for (int64_t j = 0; j < pieces; ++j) lengths.push_back(r / pieces + (j < r % pieces ? 1 : 0));
    cuts.pieces.push_back(std::move(lengths));
    cuts.first.push_back(out);
    out += pieces;
  }
  return cuts;
}

}  // namespace ketch
