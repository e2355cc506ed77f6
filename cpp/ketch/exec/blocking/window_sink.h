#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ketch/common/memory_manager.h"
#include "ketch/exec/morsel.h"
#include "ketch/io/spill_file.h"
#include "ketch/plan/logical/window_spec.h"

namespace ketch {

/// Blocking sink of a Window node: keeps all its input, then computes the window functions
/// (ComputeWindow: one sort by partition and order keys shared by every function) and emits the
/// rows grouped by partition, sorted by the order keys within each, with the window columns
/// appended.
///
/// Memory: the morsels it keeps are charged to the query's MemoryManager. Past half of the budget
/// they are hash-partitioned by the partition keys into kSpillBuckets Arrow IPC spill files (all
/// rows of one window partition land in one bucket); the output then reads back and computes one
/// bucket at a time, so about 1/kSpillBuckets of the input is in memory at once. Without
/// partition_by there is a single bucket: it spills, but must be read back whole.
class WindowSink : public BlockingSink {
 public:
  static constexpr int kSpillBuckets = 16;

  WindowSink(WindowSpec spec, std::vector<WindowFunction> functions,
             std::shared_ptr<arrow::Schema> input_schema, std::shared_ptr<arrow::Schema> output_schema,
             int64_t morsel_rows, MemoryManager* memory, std::string spill_dir)
      : spec_(std::move(spec)),
        functions_(std::move(functions)),
        input_schema_(std::move(input_schema)),
        output_schema_(std::move(output_schema)),
        morsel_rows_(morsel_rows),
        memory_(memory),
        spill_dir_(std::move(spill_dir)) {}
  std::string name() const override { return "Window"; }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;
  arrow::Status ProduceOutput(const Source::Emit& emit) override;

  /// Spill files written (0 when the input fit in half of the budget).
  int64_t spill_files() const { return static_cast<int64_t>(buckets_.size()); }

 private:
  arrow::Status Spill();
  arrow::Status ComputeAndEmit(std::vector<std::shared_ptr<arrow::RecordBatch>> batches, int64_t* row,
                               const Source::Emit& emit);

  WindowSpec spec_;
  std::vector<WindowFunction> functions_;
  std::shared_ptr<arrow::Schema> input_schema_;
  std::shared_ptr<arrow::Schema> output_schema_;
  int64_t morsel_rows_;
  MemoryManager* memory_;
  std::string spill_dir_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
  HeldBytes held_;                                   ///< the morsels kept, charged to memory_
  std::vector<std::unique_ptr<SpillFile>> buckets_;  ///< empty until the first spill
};

}  // namespace ketch
