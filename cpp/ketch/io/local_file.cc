#include "ketch/io/local_file.h"

#include <arrow/util/io_util.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace ketch::io {

std::string OsReason(const arrow::Status& status) {
  const int errnum = arrow::internal::ErrnoFromStatus(status);
  if (errnum > 0) return std::strerror(errnum);
  return status.message();
}

std::string MessageWithOsReason(const arrow::Status& status) {
  const int errnum = arrow::internal::ErrnoFromStatus(status);
  if (errnum <= 0) return status.message();
  const std::string reason = std::strerror(errnum);
  if (status.message().find(reason) != std::string::npos) return status.message();
  return status.message() + ": " + reason;
}

arrow::Status LocalWriteError(std::string_view what, const std::string& path, const arrow::Status& cause) {
  return arrow::Status::IOError(what, " '", path, "': ", OsReason(cause));
}

std::string TemporaryPathFor(const std::string& path) {
  const std::filesystem::path target(path);
  return (target.parent_path() / ("." + target.filename().string() + ".tmp")).string();
}

AtomicLocalFile::AtomicLocalFile(std::string path, std::string what)
    : path_(std::move(path)), temp_path_(TemporaryPathFor(path_)), what_(std::move(what)) {}

arrow::Result<std::unique_ptr<AtomicLocalFile>> AtomicLocalFile::Open(std::string path, std::string what) {
  auto file = std::unique_ptr<AtomicLocalFile>(new AtomicLocalFile(std::move(path), std::move(what)));
  auto stream = arrow::io::FileOutputStream::Open(file->temp_path_);
  if (!stream.ok()) return file->Error(stream.status());
  file->stream_ = std::move(stream).ValueUnsafe();
  return file;
}

AtomicLocalFile::~AtomicLocalFile() {
  if (committed_) return;
  if (stream_ && !stream_->closed()) (void)stream_->Close();
  std::remove(temp_path_.c_str());
}

arrow::Status AtomicLocalFile::Commit() {
  if (!stream_->closed()) {
    auto st = stream_->Close();
    if (!st.ok()) return Error(st);
  }
  std::error_code ec;
  std::filesystem::rename(temp_path_, path_, ec);
  if (ec) return arrow::Status::IOError(what_, " '", path_, "': ", ec.message());
  committed_ = true;
  return arrow::Status::OK();
}

arrow::Status WriteLocalFileAtomically(const std::string& path, const uint8_t* data, int64_t size,
                                       std::string what) {
  ARROW_ASSIGN_OR_RAISE(auto file, AtomicLocalFile::Open(path, std::move(what)));
  auto st = file->stream()->Write(data, size);
  if (!st.ok()) return file->Error(st);
  return file->Commit();
}

}  // namespace ketch::io
