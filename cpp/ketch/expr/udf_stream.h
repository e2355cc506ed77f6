#pragma once

#include <arrow/api.h>

#include <memory>
#include <vector>

#include "ketch/expr/expr.h"

namespace ketch {

/// One chunk of a generator UDF's items (UdfStream::Next): the lists of the call's rows
/// `first_row`, `first_row + 1`, ... (`lists->length()` of them). A row whose items span chunks
/// appears in each of them with the items of that chunk.
struct UdfChunk {
  int64_t first_row = 0;
  std::shared_ptr<arrow::Array> lists;  ///< of the UDF's return type (a list type)
  bool done = false;                    ///< no item of any row is left after this chunk
};

/// A generator UDF's call over a batch of rows, pulled lazily chunk by chunk; destroying it closes
/// the generators (an endless generator stops when the query needs no more rows).
class UdfStream {
 public:
  virtual ~UdfStream() = default;
  /// The next items: at most `max_items` in all, and no more once about `max_bytes` are taken.
  virtual arrow::Result<UdfChunk> Next(int64_t max_items, int64_t max_bytes) = 0;
};

/// What a BatchUdf that is a generator may also be: a call whose items are pulled lazily.
class StreamingUdf {
 public:
  virtual ~StreamingUdf() = default;
  /// True when `Start` is supported now (not, e.g., under a per-call timeout).
  virtual bool CanStream() const = 0;
  /// The call as a stream of chunks, or nullptr when it must be called whole (`BatchUdf::Call`).
  virtual arrow::Result<std::unique_ptr<UdfStream>> Start(
      const std::vector<std::shared_ptr<arrow::Array>>& args, int64_t num_rows, const UdfCall& call) = 0;
};

/// The UDF's streaming side, or nullptr.
inline StreamingUdf* AsStreaming(const std::shared_ptr<BatchUdf>& udf) {
  return dynamic_cast<StreamingUdf*>(udf.get());
}

}  // namespace ketch
