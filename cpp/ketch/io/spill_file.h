#pragma once

#include <arrow/api.h>

#include <memory>
#include <string>

namespace ketch {

/// A temporary Arrow IPC file of record batches that blocking sinks spill to; deleted when the
/// object is destroyed. Write batches, call FinishWriting once, then read them back in order.
class SpillFile {
 public:
  /// Creates the spill directory if needed. IOError names the directory when it is not writable.
  static arrow::Result<std::unique_ptr<SpillFile>> Create(const std::string& dir,
                                                          const std::shared_ptr<arrow::Schema>& schema);
  ~SpillFile();

  arrow::Status Write(const arrow::RecordBatch& batch);
  arrow::Status FinishWriting();
  int64_t num_batches() const { return num_batches_; }
  int64_t bytes_written() const { return bytes_written_; }
  const std::string& path() const { return path_; }

  /// Batch `i` (after FinishWriting); reads it from disk.
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> ReadBatch(int64_t i);

 private:
  /// IOError naming the spill directory and the OS reason (e.g. "No space left on device").
  arrow::Status Error(const arrow::Status& cause) const;

  struct State;
  std::unique_ptr<State> state_;
  std::string dir_;
  std::string path_;
  int64_t num_batches_ = 0;
  int64_t bytes_written_ = 0;
};

/// Fails with an IOError naming `dir` unless a file can be created in it (checked at plan time).
arrow::Status CheckSpillDirectory(const std::string& dir);

}  // namespace ketch
