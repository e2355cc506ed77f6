#pragma once

#include <arrow/api.h>

#include <map>
#include <memory>
#include <vector>

#include "ketch/common/memory_manager.h"
#include "ketch/exec/morsel.h"

namespace ketch {

/// into_partitions(num): splits or coalesces adjacent input partitions into exactly `num`
/// partitions without a shuffle, order kept (Daft's semantics). A blocking sink: it keeps its input
/// (charged to the memory budget) to learn each partition's size.
/// - num >= m input partitions: input partition i becomes num / m pieces (one more for the first
///   num % m inputs), its r rows split into pieces whose sizes differ by at most one row (a piece
///   may be empty when r is smaller than the number of pieces).
/// - num < m: output partition j gathers m / num adjacent input partitions (one more for the
///   first m % num outputs).
/// Empty outputs are emitted as empty batches, so the result always has `num` partitions.
/// Used only when the cut depends on row counts not known before the input runs; otherwise the
/// executor streams (IntoPartitionsCuts).
class IntoPartitionsSink : public BlockingSink {
 public:
  IntoPartitionsSink(int64_t num_partitions, std::shared_ptr<arrow::Schema> schema, int64_t morsel_rows,
                     MemoryManager* memory)
      : num_partitions_(num_partitions),
        schema_(std::move(schema)),
        morsel_rows_(morsel_rows),
        memory_(memory) {
    inputs_[0];
  }
  std::string name() const override { return "IntoPartitions"; }
  arrow::Status BeginPartition(int64_t partition) override {
    current_ = partition;
    inputs_[partition];
    return arrow::Status::OK();
  }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;
  arrow::Status ProduceOutput(const Source::Emit& emit) override;

 private:
  int64_t num_partitions_;
  std::shared_ptr<arrow::Schema> schema_;
  int64_t morsel_rows_;
  MemoryManager* memory_;
  int64_t current_ = 0;
  std::map<int64_t, std::vector<std::shared_ptr<arrow::RecordBatch>>> inputs_;  // by input partition
  HeldBytes held_;  ///< the morsels kept, charged to memory_
};

}  // namespace ketch
