#include "ketch/io/formats/parquet_footers.h"

#include <sys/stat.h>

#include <tuple>
#include <utility>

#include "ketch/io/formats/parquet_format.h"

namespace ketch::io {
namespace {

// A local file's size and modification time (ns); {-1, -1} for S3 or when it cannot be stat'ed.
std::pair<int64_t, int64_t> LocalStamp(const std::string& path) {
  if (IsS3Url(path)) return {-1, -1};
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {-1, -1};
  return {static_cast<int64_t>(st.st_size),
          static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

}  // namespace

std::shared_ptr<parquet::FileMetaData> ParquetFooters::Current(const Slot& slot, const std::string& path) {
  if (!slot.metadata || IsS3Url(path)) return slot.metadata;
  const auto [size, mtime] = LocalStamp(path);
  if (size < 0 || size != slot.local_size || mtime != slot.local_mtime_ns) return nullptr;
  return slot.metadata;
}

arrow::Result<std::shared_ptr<parquet::FileMetaData>> ParquetFooters::Get(size_t index,
                                                                          const std::string& path,
                                                                          int64_t size_bytes,
                                                                          const S3Config& s3) {
  if (index >= slots_.size()) return ReadParquetMetadata(path, s3, size_bytes);
  Slot& slot = slots_[index];
  std::lock_guard<std::mutex> lock(slot.mutex);  // one read per file, even when asked twice at once
  if (auto kept = Current(slot, path)) return kept;
  const auto stamp = LocalStamp(path);  // before the read: a write during it makes the next call reread
  slot.metadata = nullptr;
  ARROW_ASSIGN_OR_RAISE(auto metadata, ReadParquetMetadata(path, s3, size_bytes));
  slot.metadata = metadata;
  std::tie(slot.local_size, slot.local_mtime_ns) = stamp;
  return metadata;
}

std::shared_ptr<parquet::FileMetaData> ParquetFooters::Peek(size_t index, const std::string& path) const {
  if (index >= slots_.size()) return nullptr;
  std::lock_guard<std::mutex> lock(slots_[index].mutex);
  return Current(slots_[index], path);
}

}  // namespace ketch::io
