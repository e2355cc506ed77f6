#pragma once

#include <arrow/api.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ketch/expr/expr.h"

namespace ketch {

enum class LogicalKind { kInMemorySource, kParquetScan, kProject, kFilter, kLimit, kWriteParquet };

/// What a Parquet scan reads, including what the optimizer pushed into it.
struct ParquetScanInfo {
  std::vector<std::string> paths;                   ///< files, already expanded from globs
  std::shared_ptr<arrow::Schema> file_schema;       ///< schema of the files
  std::optional<std::vector<std::string>> columns;  ///< projection pushdown (file order); none = all
  ExprPtr filter;                                   ///< filter pushdown; nullptr = none
};

/// Where and how write_parquet writes.
struct WriteParquetInfo {
  std::string root_dir;
  std::string compression = "snappy";
};

class LogicalPlan;
using LogicalPlanPtr = std::shared_ptr<const LogicalPlan>;

/// An immutable logical plan node. Factories validate at plan time (unknown columns, wrong types,
/// non-boolean predicates) so errors surface before any data is read, and derive the output schema.
class LogicalPlan {
 public:
  static arrow::Result<LogicalPlanPtr> InMemory(std::shared_ptr<arrow::Schema> schema,
                                                std::vector<std::shared_ptr<arrow::RecordBatch>> batches);
  static arrow::Result<LogicalPlanPtr> ParquetScan(ParquetScanInfo info);
  static arrow::Result<LogicalPlanPtr> Project(LogicalPlanPtr input, std::vector<ExprPtr> exprs);
  static arrow::Result<LogicalPlanPtr> Filter(LogicalPlanPtr input, ExprPtr predicate);
  static arrow::Result<LogicalPlanPtr> Limit(LogicalPlanPtr input, int64_t limit);
  static arrow::Result<LogicalPlanPtr> WriteParquet(LogicalPlanPtr input, WriteParquetInfo info);

  /// The same node over new inputs (schema re-derived and re-validated).
  arrow::Result<LogicalPlanPtr> WithInputs(std::vector<LogicalPlanPtr> inputs) const;

  LogicalKind kind() const { return kind_; }
  const std::shared_ptr<arrow::Schema>& schema() const { return schema_; }
  const std::vector<LogicalPlanPtr>& inputs() const { return inputs_; }
  const std::vector<ExprPtr>& exprs() const { return exprs_; }
  const ExprPtr& predicate() const { return predicate_; }
  int64_t limit() const { return limit_; }
  const ParquetScanInfo& scan() const { return scan_; }
  const WriteParquetInfo& write() const { return write_; }
  const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches() const { return batches_; }

  /// One line naming the node, e.g. "Filter: (col(a) > lit(1))".
  std::string Label() const;
  /// "key = value" details shown under the label (scan pushdowns, write target).
  std::vector<std::string> Details() const;
  /// The whole tree in Daft's explain style ("* Node" / "|   Key = value").
  std::string ToString() const;

 private:
  LogicalKind kind_ = LogicalKind::kInMemorySource;
  std::shared_ptr<arrow::Schema> schema_;
  std::vector<LogicalPlanPtr> inputs_;
  std::vector<ExprPtr> exprs_;
  ExprPtr predicate_;
  int64_t limit_ = 0;
  ParquetScanInfo scan_;
  WriteParquetInfo write_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
};

/// Renders a tree of nodes given label/details/children accessors (shared by logical and physical plans).
std::string RenderPlanTree(const std::vector<std::pair<std::string, std::vector<std::string>>>& nodes);

}  // namespace ketch
