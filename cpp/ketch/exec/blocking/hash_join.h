#pragma once

#include <arrow/compute/row/grouper.h>

#include <mutex>

#include "ketch/common/memory_manager.h"
#include "ketch/exec/operator.h"
#include "ketch/io/spill_file.h"
#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// The partition function shared by the two inputs of one join: join keys cast to their common
/// type go through one Arrow Grouper, so equal keys on either side get the same group id, and
/// partition = group id % partitions. Thread-safe.
class JoinPartitioner {
 public:
  static constexpr int kPartitions = 16;
  /// `key_types`: the keys' common types; extension types partition as their storage.
  explicit JoinPartitioner(std::vector<std::shared_ptr<arrow::DataType>> key_types);
  /// Partition of each row of `batch` (keys named `keys`).
  arrow::Result<std::shared_ptr<arrow::Int32Array>> Partition(const arrow::RecordBatch& batch,
                                                              const std::vector<std::string>& keys);

 private:
  std::vector<std::shared_ptr<arrow::DataType>> key_types_;
  std::mutex mutex_;
  std::unique_ptr<arrow::compute::Grouper> grouper_;
};

/// Sink of one join input. Keeps the morsels (charged to the query's MemoryManager); past half of
/// the budget it partitions them with the join's JoinPartitioner and spills each partition to its
/// own Arrow IPC file (grace hash join). The join reads it back whole or partition by partition.
class JoinInputSink : public StreamingSink {
 public:
  JoinInputSink(std::shared_ptr<JoinPartitioner> partitioner, std::vector<std::string> keys,
                std::shared_ptr<arrow::Schema> schema, MemoryManager* memory, std::string spill_dir)
      : partitioner_(std::move(partitioner)),
        keys_(std::move(keys)),
        schema_(std::move(schema)),
        memory_(memory),
        spill_dir_(std::move(spill_dir)) {}
  std::string name() const override { return "JoinInput"; }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;

  bool spilled() const { return !partitions_.empty(); }
  /// Every row (only when not spilled).
  arrow::Result<std::shared_ptr<arrow::Table>> All();
  /// The rows of partition `p` (read from its file, or filtered from memory).
  arrow::Result<std::shared_ptr<arrow::Table>> Partition(int p);

 private:
  arrow::Status SpillBatch(const std::shared_ptr<arrow::RecordBatch>& batch);

  std::shared_ptr<JoinPartitioner> partitioner_;
  std::vector<std::string> keys_;
  std::shared_ptr<arrow::Schema> schema_;
  MemoryManager* memory_;
  std::string spill_dir_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
  HeldBytes held_;  ///< the morsels kept, charged to memory_
  std::vector<std::unique_ptr<SpillFile>> partitions_;
  bool finished_writing_ = false;
};

/// What JoinTables needs besides the two inputs.
struct JoinTablesOptions {
  JoinSpec spec;
  std::shared_ptr<arrow::Schema> left_schema, right_schema, output_schema;
  bool use_threads = false;            ///< let Acero use Arrow's CPU pool
  bool build_on_smaller_side = false;  ///< else the hash table is always built on `right`
};

/// Joins two complete tables: Acero's hash join over the key columns (cast to their common type,
/// -0.0 normalized) and a row index per side, then `take` of each side's payload.
arrow::Result<std::shared_ptr<arrow::Table>> JoinTables(const std::shared_ptr<arrow::Table>& left,
                                                        const std::shared_ptr<arrow::Table>& right,
                                                        const JoinTablesOptions& options);

/// True for the join types whose left rows can be joined independently of each other (inner,
/// left, semi, anti): those can probe morsel by morsel.
bool CanProbeInChunks(JoinType how);

/// A hash table over the build (right) input of a join, built once and probed by many morsels at
/// once: Arrow's Grouper maps each distinct build key (cast to the join's common type, -0.0
/// normalized, extension types viewed as their storage: key_storage.h) to a group id, and the build rows of
/// each group are kept in CSR form (in build order). Rows with a null key never match. Probing looks keys up
/// (Grouper::Lookup, serialized by a mutex; the rest runs in parallel) and returns the matching (probe row,
/// build row) pairs.
class JoinHashTable {
 public:
  /// `build`: the whole right input; `keys`: its key columns; `key_types`: their common types.
  static arrow::Result<std::shared_ptr<JoinHashTable>> Build(
      const std::shared_ptr<arrow::Table>& build, const std::vector<std::string>& keys,
      const std::vector<std::shared_ptr<arrow::DataType>>& key_types);
  /// Row indices to take for `how` (inner, left, semi, anti): `probe` indexes the batch,
  /// `build` the build side (null for a left row without a match; absent for semi and anti).
  struct Matches {
    std::shared_ptr<arrow::Int64Array> probe;
    std::shared_ptr<arrow::Int64Array> build;
  };
  arrow::Result<Matches> Probe(const arrow::RecordBatch& batch, const std::vector<std::string>& keys,
                               JoinType how) const;
  const std::shared_ptr<arrow::RecordBatch>& rows() const { return rows_; }
  /// Build rows of the most frequent key: a probe row yields at most this many output rows.
  int64_t max_matches() const { return max_matches_; }

 private:
  std::vector<std::shared_ptr<arrow::DataType>> key_types_;
  std::shared_ptr<arrow::RecordBatch> rows_;  // the build side, one contiguous batch
  mutable std::mutex mutex_;
  std::unique_ptr<arrow::compute::Grouper> grouper_;
  std::vector<int64_t> offsets_;  // group g's rows: row_ids_[offsets_[g] .. offsets_[g + 1])
  std::vector<int64_t> row_ids_;
  int64_t max_matches_ = 0;
};

/// Assembles a join's output from the rows each side contributes (`right_taken` is null for semi
/// and anti joins): left columns, merged key columns, then the right side's other columns.
arrow::Result<std::shared_ptr<arrow::Table>> AssembleJoinOutput(
    const std::shared_ptr<arrow::Table>& left_taken, const std::shared_ptr<arrow::Table>& right_taken,
    const JoinTablesOptions& options);

/// The streaming probe: each morsel of the left input probes the hash table of the complete
/// build side (the right input, collected and hashed once) on the compute pool, many morsels at
/// once; output rows keep the probe order (then the build order among one row's matches).
class HashJoinProbeOperator : public IntermediateOperator {
 public:
  /// `build_is_left`: an inner join whose hash table holds the left input (estimated much smaller);
  /// the morsels then come from the right input.
  HashJoinProbeOperator(std::shared_ptr<JoinHashTable> table, JoinTablesOptions options,
                        arrow::internal::Executor* compute, bool build_is_left = false)
      : table_(std::move(table)),
        options_(std::move(options)),
        executor_(compute),
        build_is_left_(build_is_left) {}
  std::string name() const override { return "HashJoinProbe"; }
  arrow::internal::Executor* executor() const override { return executor_; }
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Execute(
      const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const override;

 private:
  std::shared_ptr<JoinHashTable> table_;
  JoinTablesOptions options_;
  arrow::internal::Executor* executor_;
  bool build_is_left_;
};

/// Equi-join of two finished pipelines (inner, left, right, outer, semi, anti).
///
/// The hash table is built on the smaller input and the larger one probes it (Arrow Acero's hash
/// join node, used as a kernel over the key columns and a row index only); the payload columns of
/// each side are then gathered with `take`, so any column type (images included) passes through.
/// When an input spilled, the join runs partition by partition. Key columns of different integer
/// widths, or of string and large_string, are compared after a cast to the wider type. Output row
/// order is not defined, as in Daft.
class HashJoinSource : public Source {
 public:
  HashJoinSource(JoinInputSink* left, JoinInputSink* right, JoinSpec spec,
                 std::shared_ptr<arrow::Schema> left_schema, std::shared_ptr<arrow::Schema> right_schema,
                 std::shared_ptr<arrow::Schema> output_schema, int64_t morsel_rows)
      : left_(left),
        right_(right),
        spec_(std::move(spec)),
        left_schema_(std::move(left_schema)),
        right_schema_(std::move(right_schema)),
        output_schema_(std::move(output_schema)),
        morsel_rows_(morsel_rows) {}
  std::string name() const override { return "HashJoin"; }
  arrow::Status Produce(const Emit& emit) override;

 private:
  JoinInputSink* left_;
  JoinInputSink* right_;
  JoinSpec spec_;
  std::shared_ptr<arrow::Schema> left_schema_, right_schema_, output_schema_;
  int64_t morsel_rows_;
};

}  // namespace ketch
