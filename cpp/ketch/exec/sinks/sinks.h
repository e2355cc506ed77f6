#pragma once

#include "ketch/exec/operator.h"
#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// Passes on the first `limit` rows, then reports Done so the source stops reading.
/// Passes on rows [offset, offset + limit) of the morsels it receives in order, then says it is
/// done (the executor stops reading).
class LimitSink : public StreamingSink {
 public:
  explicit LimitSink(int64_t limit, int64_t offset = 0) : remaining_(limit), to_skip_(offset) {}
  std::string name() const override { return "Limit"; }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;
  bool Done() const override { return remaining_ <= 0; }
  int64_t LastOutputStart() const override { return last_start_; }

 private:
  int64_t remaining_;
  int64_t to_skip_;
  int64_t last_start_ = 0;
};

/// Appends a uint64 column numbering the rows it receives 0, 1, 2, ... (they arrive in stream
/// order) and passes each morsel on: `monotonically_increasing_id()`. `schema`: the output schema
/// (the input's columns, then the id column).
class MonotonicIdSink : public StreamingSink {
 public:
  explicit MonotonicIdSink(std::shared_ptr<arrow::Schema> schema) : schema_(std::move(schema)) {}
  std::string name() const override { return "MonotonicId"; }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;

 private:
  std::shared_ptr<arrow::Schema> schema_;
  uint64_t next_ = 0;
};

/// A sink that tracks the partition of the morsels it receives (BeginPartition) and whether it
/// has kept something of that partition yet (an empty partition is announced once).
class PartitionTrackingSink : public StreamingSink {
 public:
  arrow::Status BeginPartition(int64_t partition) override {
    partition_ = partition;
    announced_ = false;
    return arrow::Status::OK();
  }

 protected:
  int64_t partition_ = 0;
  bool announced_ = false;
};

/// Keeps every morsel; Finalize returns them in order (DataFrame.collect). `partitions()` gives
/// the partition of each returned batch (an empty batch stands for an empty partition).
class CollectSink : public PartitionTrackingSink {
 public:
  std::string name() const override { return "Collect"; }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;
  arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> Finalize() override {
    return std::move(batches_);
  }
  const std::vector<int64_t>& partitions() const { return partitions_; }

 private:
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
  std::vector<int64_t> partitions_;
};

/// Where a query's output goes while it runs (streaming results: DataFrame.iter_partitions,
/// iter_rows). Called in order, from one thread at a time; it may block (backpressure: the
/// pipeline waits for the consumer).
class ResultConsumer {
 public:
  virtual ~ResultConsumer() = default;
  /// A batch of `partition` (partition numbers never decrease; an empty batch announces a
  /// partition that may have no rows). An error stops the query.
  virtual arrow::Status Consume(int64_t partition, std::shared_ptr<arrow::RecordBatch> batch) = 0;
};

/// The root sink of a streamed query: hands each morsel to a ResultConsumer.
class ConsumerSink : public PartitionTrackingSink {
 public:
  explicit ConsumerSink(ResultConsumer* consumer) : consumer_(consumer) {}
  std::string name() const override { return "Collect"; }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;

 private:
  ResultConsumer* consumer_;
};

}  // namespace ketch
