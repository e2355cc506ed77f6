#pragma once

#include <arrow/api.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ketch/io/formats/lance_nearest.h"

namespace ketch::io {

/// One read of a Lance dataset: some fragments of one version, with what was pushed into Lance's
/// scanner. The core cannot read Lance itself (the format is pylance's); the Python bindings
/// register a reader (SetLanceReader) that opens `LanceDataset.scanner(...)` and hands back its
/// Arrow stream, which the scan then pulls without the GIL.
struct LanceReadRequest {
  std::string uri;
  int64_t version = -1;               ///< the dataset version (pinned at plan time)
  std::vector<int64_t> fragment_ids;  ///< in this order; never empty
  std::vector<std::string> columns;   ///< projection; empty = none (a row count only)
  std::string filter;                 ///< Lance SQL filter; empty = none
  int64_t limit = -1;                 ///< rows after the filter; -1 = none
  int64_t offset = 0;                 ///< rows to skip (after the filter)
  std::map<std::string, std::string> storage_options;
  /// A nearest-neighbour search over the whole version (fragment_ids, limit and offset are then
  /// ignored): the k nearest rows, the filter applied first.
  std::optional<LanceNearest> nearest;
};

/// The bytes Lance reported reading for one read, filled in when its reader is exhausted.
struct LanceReadStats {
  std::shared_ptr<std::atomic<int64_t>> bytes_read = std::make_shared<std::atomic<int64_t>>(0);
};

/// Opens a reader over the rows of `request` (batches in fragment order). Errors: IOError from
/// Lance, naming the dataset; Invalid when no reader is registered.
using LanceReader = std::function<arrow::Result<std::shared_ptr<arrow::RecordBatchReader>>(
    const LanceReadRequest& request, const LanceReadStats& stats)>;

/// Installs the process-wide Lance reader (the Python module does this at import).
void SetLanceReader(LanceReader reader);

/// Opens a read through the registered reader.
arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenLance(const LanceReadRequest& request,
                                                                   const LanceReadStats& stats);

}  // namespace ketch::io
