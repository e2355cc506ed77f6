#include "ketch/io/formats/parquet_footers.h"

#include "ketch/io/formats/parquet_format.h"

namespace ketch::io {

arrow::Result<std::shared_ptr<parquet::FileMetaData>> ParquetFooters::Get(size_t index,
                                                                          const std::string& path,
                                                                          int64_t size_bytes,
                                                                          const S3Config& s3) {
  if (index >= slots_.size()) return ReadParquetMetadata(path, s3, size_bytes);
  Slot& slot = slots_[index];
  std::lock_guard<std::mutex> lock(slot.mutex);  // one read per file, even when asked twice at once
  if (!slot.metadata) {
    ARROW_ASSIGN_OR_RAISE(slot.metadata, ReadParquetMetadata(path, s3, size_bytes));
  }
  return slot.metadata;
}

void ParquetFooters::Put(size_t index, std::shared_ptr<parquet::FileMetaData> metadata) {
  if (index >= slots_.size()) return;
  std::lock_guard<std::mutex> lock(slots_[index].mutex);
  slots_[index].metadata = std::move(metadata);
}

std::shared_ptr<parquet::FileMetaData> ParquetFooters::Peek(size_t index) const {
  if (index >= slots_.size()) return nullptr;
  std::lock_guard<std::mutex> lock(slots_[index].mutex);
  return slots_[index].metadata;
}

}  // namespace ketch::io
