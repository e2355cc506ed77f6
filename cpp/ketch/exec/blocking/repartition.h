#pragma once

#include <arrow/api.h>

#include <memory>
#include <string>
#include <vector>

#include "ketch/common/memory_manager.h"
#include "ketch/exec/morsel.h"
#include "ketch/exec/operator.h"
#include "ketch/io/spill_file.h"

namespace ketch {

/// The column a PartitionIdOperator appends: the output partition of each row (int32).
inline constexpr const char* kPartitionIdColumn = "__ketch_partition_id";

/// The map side of a repartition, run in parallel on the compute pool: gives each row its output
/// partition and groups the morsel by it (a stable sort, so rows keep their order within a
/// partition), appending the partition as a last int32 column (kPartitionIdColumn).
/// - Hash partitioning (`keys` given): partition = RowHashes(keys) % num_partitions, so equal keys
///   (nulls included) share a partition in every morsel, run and process.
/// - Random partitioning (no keys): rows are dealt round-robin from a random start per morsel,
///   which spreads them evenly (each partition gets the same number of rows, +-1 per morsel).
class PartitionIdOperator : public IntermediateOperator {
 public:
  PartitionIdOperator(std::vector<std::string> keys, int64_t num_partitions, uint64_t seed,
                      arrow::internal::Executor* executor)
      : keys_(std::move(keys)), num_partitions_(num_partitions), seed_(seed), executor_(executor) {}
  std::string name() const override { return "RepartitionMap"; }
  arrow::internal::Executor* executor() const override { return executor_; }
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Execute(
      const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const override;

 private:
  std::vector<std::string> keys_;
  int64_t num_partitions_;
  uint64_t seed_;
  arrow::internal::Executor* executor_;
};

/// The reduce side of a repartition (a blocking sink): keeps each partition's rows, charged to
/// the query's memory budget; past half of the budget every partition spills to its own Arrow IPC
/// file. Its output emits partition 0's rows, then partition 1's, ... (each cut into morsels of
/// at most `morsel_rows`; an empty partition as one empty batch), so the result has exactly
/// `num_partitions` partitions. Row order within a partition follows the input order.
class RepartitionSink : public BlockingSink {
 public:
  RepartitionSink(int64_t num_partitions, std::shared_ptr<arrow::Schema> schema, int64_t morsel_rows,
                  MemoryManager* memory, std::string spill_dir)
      : num_partitions_(num_partitions),
        schema_(std::move(schema)),
        morsel_rows_(morsel_rows),
        memory_(memory),
        spill_dir_(std::move(spill_dir)),
        buckets_(static_cast<size_t>(num_partitions)) {}
  std::string name() const override { return "Repartition"; }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;
  arrow::Status ProduceOutput(const Source::Emit& emit) override;

 private:
  arrow::Status Add(int64_t partition, std::shared_ptr<arrow::RecordBatch> piece);
  arrow::Status SpillAll();

  int64_t num_partitions_;
  std::shared_ptr<arrow::Schema> schema_;
  int64_t morsel_rows_;
  MemoryManager* memory_;
  std::string spill_dir_;
  std::vector<std::vector<std::shared_ptr<arrow::RecordBatch>>> buckets_;  // in memory
  std::vector<std::unique_ptr<SpillFile>> spilled_;                        // per partition, once spilled
  HeldBytes held_;  ///< the morsels kept, charged to memory_
};

/// Batches of at most `max_rows` rows from `pieces`, small ones concatenated (zero-copy when one
/// piece already is a batch).
arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> CoalesceBatches(
    const std::vector<std::shared_ptr<arrow::RecordBatch>>& pieces, int64_t max_rows);

}  // namespace ketch
