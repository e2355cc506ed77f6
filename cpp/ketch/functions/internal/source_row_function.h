#pragma once

#include <arrow/status.h>

namespace ketch::internal {

/// The column name the Ray runner gives `_source_row()` when it moves a source's rows between
/// tasks; an in-memory source whose batches end with an int64 column of this name emits its values
/// as the rows' source rows and drops it (exec/sources/in_memory_source.h).
inline constexpr const char* kSourceRowColumn = "__ketch_source_row";

/// Registers the engine-internal functions (not part of the Daft API):
/// - _source_row (no arguments) → int64: each row's source row (EvalContext::SourceRow: its
///   0-based position across all files of its source, kept through pushed filters). The Ray
///   runner reads a split Parquet row group once and ships slices of it to other workers with this
///   column, so their errors, seeds and file names still name the rows' source rows.
arrow::Status RegisterInternalFunctions();

}  // namespace ketch::internal
