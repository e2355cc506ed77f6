#pragma once

#include <cstdint>

#include "ketch/plan/optimizer/rule.h"

namespace ketch {

/// Sizing of scan tasks (execution-config fields, Daft's defaults).
struct ScanTaskSizing {
  int64_t min_size_bytes = 96LL << 20;   ///< row groups are merged into tasks of at least this much
  int64_t max_size_bytes = 384LL << 20;  ///< files larger than this are split by row group
  int32_t workers = 1;                   ///< compute threads: an expensive pipeline gets ≥ 2 tasks each
  int32_t max_sources = 10;              ///< at most this many files merged into one task
};

/// The optimizer's last rule: turns each file scan into scan tasks, after every pushdown.
///  - Hive partitions: files whose partition values make the pushed filter false are dropped
///    before any is opened.
///  - Parquet: footers are read (in parallel); row groups whose min/max statistics prove the
///    pushed filter keeps nothing are dropped; with a pushed limit and no filter, row groups past
///    the limit are dropped. The rest is cut into tasks of whole, consecutive row groups of one
///    file: merged up to `min_size_bytes` (compressed bytes of the columns read) or less, so that
///    each worker gets a task to decode; never past `max_size_bytes` (a larger file is split);
///    when the pipeline above the scan is expensive (Python UDFs, URL downloads, image kernels),
///    cut to give every worker >= 2 tasks.
///  - CSV and JSON: one task per file (their readers cannot start mid-file).
/// `explain` shows the number of tasks and why.
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
