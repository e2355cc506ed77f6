#pragma once

#include <arrow/api.h>

#include <functional>
#include <memory>

#include "ketch/exec/operator.h"

namespace ketch {

/// What an IntermediateOperator may also be: one whose output for a morsel comes in pieces (a
/// generator UDF pulled lazily). The executor then calls ExecuteStream instead of Execute.
class StreamingOperator {
 public:
  virtual ~StreamingOperator() = default;
  /// A piece of the output and the rows it describes.
  using EmitPiece = std::function<arrow::Status(std::shared_ptr<arrow::RecordBatch> piece, EvalContext rows)>;
  /// True when this instance streams (e.g. its projection holds exactly one lazy generator).
  virtual bool streams() const = 0;
  /// Sends every piece of the output but the last to `emit` (each of at most about `max_rows` rows
  /// and `max_bytes` bytes) and returns the last one, with `ctx` describing its rows. A non-OK
  /// status from `emit` (the query needs no more rows) ends the stream and is returned.
  virtual arrow::Result<std::shared_ptr<arrow::RecordBatch>> ExecuteStream(
      const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx, int64_t max_rows,
      int64_t max_bytes, const EmitPiece& emit) const = 0;
};

/// The operator's streaming side when it streams, else nullptr.
inline const StreamingOperator* AsStreaming(const IntermediateOperator& op) {
  const auto* streaming = dynamic_cast<const StreamingOperator*>(&op);
  return streaming != nullptr && streaming->streams() ? streaming : nullptr;
}

}  // namespace ketch
