#pragma once

#include <arrow/api.h>

#include <memory>
#include <vector>

#include "ketch/exec/operator.h"

namespace ketch {

/// Bytes a batch references (a slice counts only its range; Arrow's ReferencedBufferSize).
int64_t BatchBytes(const arrow::RecordBatch& batch);

/// Splits a table into record batches of at most `rows` rows (zero-copy slices).
arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> TableToBatches(const arrow::Table& table,
                                                                               int64_t rows);

/// Emits a table as morsels of at most `rows` rows; `*next_row` numbers the rows across calls.
arrow::Status EmitTable(const arrow::Table& table, int64_t rows, int64_t* next_row, const Source::Emit& emit);

/// A blocking sink's whole output held in one batch (`batch`, or no rows when null): emitted in
/// morsels of at most `morsel_rows` rows (at least 1), numbered from row 0.
arrow::Status EmitBatch(const std::shared_ptr<arrow::Schema>& schema,
                        std::shared_ptr<arrow::RecordBatch> batch, int64_t morsel_rows,
                        const Source::Emit& emit);

/// The rows of `batch` whose partition id (one int32 per row) is p, for every p < partitions.
arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> SplitByPartition(
    const std::shared_ptr<arrow::RecordBatch>& batch, const std::shared_ptr<arrow::Int32Array>& partition_ids,
    int partitions);

/// A sink that needs all its input before it produces anything (sort, aggregate). Subclasses
/// implement ProduceOutput (streamed to the next pipeline); Finalize collects it.
class BlockingSink : public StreamingSink {
 public:
  arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> Finalize() final;
};

}  // namespace ketch
