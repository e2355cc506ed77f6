#include "ketch/io/formats/file_access.h"

#include <arrow/filesystem/filesystem.h>
#include <arrow/io/file.h>
#include <arrow/util/io_util.h>

#include <cerrno>
#include <cstring>

namespace ketch::io {
namespace {

/// Forwards to a file and counts the bytes read through it.
class CountingFile : public arrow::io::RandomAccessFile {
 public:
  CountingFile(std::shared_ptr<arrow::io::RandomAccessFile> file, std::atomic<int64_t>* counter)
      : file_(std::move(file)), counter_(counter) {}

  arrow::Status Close() override { return file_->Close(); }
  bool closed() const override { return file_->closed(); }
  arrow::Result<int64_t> Tell() const override { return file_->Tell(); }
  arrow::Status Seek(int64_t position) override { return file_->Seek(position); }
  arrow::Result<int64_t> GetSize() override { return file_->GetSize(); }

  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override { return Count(file_->Read(nbytes, out)); }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override {
    return CountBuffer(file_->Read(nbytes));
  }
  arrow::Result<int64_t> ReadAt(int64_t position, int64_t nbytes, void* out) override {
    return Count(file_->ReadAt(position, nbytes, out));
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t position, int64_t nbytes) override {
    return CountBuffer(file_->ReadAt(position, nbytes));
  }

 private:
  arrow::Result<int64_t> Count(arrow::Result<int64_t> n) {
    if (n.ok()) *counter_ += *n;
    return n;
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> CountBuffer(
      arrow::Result<std::shared_ptr<arrow::Buffer>> buffer) {
    if (buffer.ok()) *counter_ += (*buffer)->size();
    return buffer;
  }

  std::shared_ptr<arrow::io::RandomAccessFile> file_;
  std::atomic<int64_t>* counter_;
};

// Why a local open failed, in words a user acts on: the file is missing (removed after it was
// listed?), access is denied, or the OS's own reason; "[errno N]" keeps the code for callers.
arrow::Status LocalOpenError(const std::string& path, const arrow::Status& st) {
  const int err = arrow::internal::ErrnoFromStatus(st);
  switch (err) {
    case ENOENT:
      return arrow::Status::IOError("cannot open '", path, "': no such file [errno 2]");
    case EACCES:
    case EPERM:
      return arrow::Status::IOError("cannot open '", path, "': permission denied [errno ", err, "]");
    case EISDIR:
      return arrow::Status::IOError("cannot open '", path, "': it is a directory [errno ", err, "]");
    case 0:
      return arrow::Status::IOError("cannot open '", path, "': ", st.message());
    default:
      return arrow::Status::IOError("cannot open '", path, "': ", std::strerror(err), " [errno ", err, "]");
  }
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenInputFile(const std::string& path,
                                                                          const S3Config& s3,
                                                                          std::atomic<int64_t>* bytes_read,
                                                                          int64_t size_bytes) {
  std::shared_ptr<arrow::io::RandomAccessFile> file;
  if (IsS3Url(path)) {
    ARROW_ASSIGN_OR_RAISE(auto fs, S3FileSystemFor(s3));
    // With the listed size Arrow skips its HEAD request; reads are ranged GETs either way.
    arrow::Result<std::shared_ptr<arrow::io::RandomAccessFile>> opened;
    if (size_bytes >= 0) {
      arrow::fs::FileInfo info(path.substr(5), arrow::fs::FileType::File);
      info.set_size(size_bytes);
      opened = fs->OpenInputFile(info);
    } else {
      opened = fs->OpenInputFile(path.substr(5));
    }
    if (!opened.ok()) return arrow::Status::IOError("cannot open '", path, "': ", opened.status().message());
    file = *opened;
  } else {
    auto opened = arrow::io::ReadableFile::Open(path);
    if (!opened.ok()) return LocalOpenError(path, opened.status());
    file = *opened;
  }
  if (!bytes_read) return file;
  return std::make_shared<CountingFile>(std::move(file), bytes_read);
}

}  // namespace ketch::io
