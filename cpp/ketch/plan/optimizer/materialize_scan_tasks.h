#pragma once

#include <cstdint>

#include "ketch/plan/optimizer/rule.h"

namespace ketch {

/// Sizing of scan tasks (execution-config fields, Daft's defaults).
struct ScanTaskSizing {
  int64_t min_size_bytes = 96LL << 20;   ///< row groups are merged into tasks of at least this much
  int64_t max_size_bytes = 384LL << 20;  ///< files larger than this are split by row group
  int32_t workers =
      1;  ///< compute threads (Ray runner: the cluster's CPUs): an expensive pipeline gets ≥ 2 tasks each
  int32_t max_sources = 10;  ///< at most this many files merged into one task
};

/// The optimizer's last rule: turns each file scan into scan tasks (ScanTasks: entries grouped into
/// tasks 0..G-1 in file order; one task is one partition), after every pushdown.
///  - Hive partitions: files whose partition values make the pushed filter false are dropped
///    before any is opened.
///  - Parquet: footers are read (in parallel); row groups whose min/max statistics prove the
///    pushed filter keeps nothing are dropped; with a pushed limit and no filter, row groups past
///    the limit are dropped. The rest is cut greedily, in file order, into tasks: row groups of a
///    file are merged up to `min_size_bytes` (compressed bytes of the columns read) or less, so
///    that each worker gets a task; small files are merged into one task up to `min_size_bytes`
///    and at most `max_sources` files (Daft's max_sources_per_scan_task); never past
///    `max_size_bytes` (a larger file is split by row group).
///  - Expensive pipeline above the scan (Python UDFs, URL downloads, image kernels): tasks are cut
///    to give every worker >= 2 (merging only up to that size), and a row group larger than one
///    such task is split into row ranges (ScanTask::row_offset/row_count). The ranges of a row
///    group stay consecutive and the scan fetches and decodes it once (bytes read as a plain scan).
///  - CSV and JSON: whole files (their readers cannot start mid-file), merged like small Parquet
///    files by file size.
///  - Lance: fragments (live row counts and data-file sizes from the manifest) merged like small
///    files; with a limit and no filter, fragments past the limit are dropped; below an expensive
///    pipeline a large fragment is split into row ranges (Lance's offset/limit) unless a filter is
///    pushed (Lance's offset counts filtered rows).
/// `explain` shows the number of tasks and why ("Scan tasks = G (...)").
class MaterializeScanTasks : public OptimizerRule {
 public:
  explicit MaterializeScanTasks(ScanTaskSizing sizing) : sizing_(sizing) {}
  std::string name() const override { return "MaterializeScanTasks"; }
  arrow::Result<Transformed> Apply(const LogicalPlanPtr& plan) const override;

 private:
  arrow::Result<Transformed> Visit(const LogicalPlanPtr& plan, bool expensive_above) const;
  ScanTaskSizing sizing_;
};

}  // namespace ketch
