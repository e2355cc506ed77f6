#pragma once

#include "ketch/exec/operator.h"
#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// Passes on the first `limit` rows, then reports Done so the source stops reading.
class LimitSink : public StreamingSink {
 public:
  explicit LimitSink(int64_t limit) : remaining_(limit) {}
  std::string name() const override { return "Limit"; }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;
  bool Done() const override { return remaining_ <= 0; }

 private:
  int64_t remaining_;
};

/// Keeps every morsel; Finalize returns them in order (DataFrame.collect).
class CollectSink : public StreamingSink {
 public:
  std::string name() const override { return "Collect"; }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;
  arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> Finalize() override {
    return std::move(batches_);
  }

 private:
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
};

/// Writes morsels into one Parquet file under `root_dir` through Arrow's Parquet writer. The file is
/// written as a hidden temporary and renamed into place by Finalize, so a failed query leaves no
/// partial file (the destructor removes the temporary). Finalize returns one row per written file
/// (column "path").
class WriteParquetSink : public StreamingSink {
 public:
  static arrow::Result<std::unique_ptr<WriteParquetSink>> Make(WriteParquetInfo info,
                                                               std::shared_ptr<arrow::Schema> schema);
  ~WriteParquetSink() override;
  std::string name() const override { return "WriteParquet"; }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;
  arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> Finalize() override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ketch
