#pragma once

#include <arrow/result.h>
#include <parquet/metadata.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ketch/io/object_store.h"

namespace ketch::io {

/// The parsed Parquet footers of one scan's files, by file index, read at most once each and kept
/// for as long as the scan's plan lives: schema inference, every optimization of the plan
/// (explain, collect, count_rows) and the scan's readers share them. Thread-safe; two threads
/// asking for the same file wait for one read. A failed read is not kept (a later call retries).
/// A local file's footer is kept with the file's size and modification time and read again when
/// either changed (a stat, no read); an S3 object's is kept as read (the scan reads the object at
/// its listed size anyway).
class ParquetFooters {
 public:
  explicit ParquetFooters(size_t num_files) : slots_(num_files) {}

  /// The footer of file `index` (at `path`, `size_bytes` long as listed, or -1 when unknown): the
  /// kept one, or read now (one ranged GET for a footer under 64 KiB). IOError names the path.
  arrow::Result<std::shared_ptr<parquet::FileMetaData>> Get(size_t index, const std::string& path,
                                                            int64_t size_bytes, const S3Config& s3);

  /// The kept footer of file `index` (at `path`), or null when it was not read yet or the local
  /// file changed since.
  std::shared_ptr<parquet::FileMetaData> Peek(size_t index, const std::string& path) const;

  size_t size() const { return slots_.size(); }

 private:
  struct Slot {
    mutable std::mutex mutex;
    std::shared_ptr<parquet::FileMetaData> metadata;
    int64_t local_size = -1;  ///< a local file's size and mtime when its footer was read
    int64_t local_mtime_ns = -1;
  };
  /// The slot's footer when it is still the file's (held under the slot's mutex).
  static std::shared_ptr<parquet::FileMetaData> Current(const Slot& slot, const std::string& path);
  std::vector<Slot> slots_;
};

}  // namespace ketch::io
