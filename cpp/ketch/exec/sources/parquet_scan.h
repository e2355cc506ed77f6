#pragma once

#include "ketch/exec/operator.h"
#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// Reads Parquet files in order through Arrow's Parquet reader: only the pushed-down columns (plus
/// those the pushed filter reads) are decoded, the pushed filter is applied to every batch, and the
/// filter-only columns are dropped before emitting. Errors name the file.
class ParquetScanSource : public Source {
 public:
  ParquetScanSource(ParquetScanInfo info, std::shared_ptr<arrow::Schema> output_schema, int64_t batch_rows)
      : info_(std::move(info)), output_schema_(std::move(output_schema)), batch_rows_(batch_rows) {}
  std::string name() const override { return "ParquetScan"; }
  arrow::Status Produce(const Emit& emit) override;

 private:
  arrow::Status ReadFile(const std::string& path, const Emit& emit);

  ParquetScanInfo info_;
  std::shared_ptr<arrow::Schema> output_schema_;
  int64_t batch_rows_;
  int64_t rows_read_ = 0;
};

/// Reads the Arrow schema of one Parquet file (footer only). IOError names the path.
arrow::Result<std::shared_ptr<arrow::Schema>> ReadParquetSchema(const std::string& path);

}  // namespace ketch
