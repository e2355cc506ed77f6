#include "ketch/io/spill_file.h"

#include <arrow/io/file.h>
#include <arrow/ipc/reader.h>
#include <arrow/ipc/writer.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "ketch/io/local_file.h"

namespace ketch {

struct SpillFile::State {
  std::shared_ptr<arrow::io::FileOutputStream> out;
  std::shared_ptr<arrow::ipc::RecordBatchWriter> writer;
  std::shared_ptr<arrow::ipc::RecordBatchFileReader> reader;
};

namespace {

std::string NextPath(const std::string& dir) {
  static std::atomic<int64_t> counter{0};
  return (std::filesystem::path(dir) /
          ("spill-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + ".arrow"))
      .string();
}

}  // namespace

arrow::Status CheckSpillDirectory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return arrow::Status::IOError("spill directory '", dir, "' cannot be created: ", ec.message());
  const std::string probe = NextPath(dir) + ".probe";
  FILE* f = std::fopen(probe.c_str(), "w");
  if (f == nullptr) {
    return arrow::Status::IOError("spill directory '", dir, "' is not writable: ", std::strerror(errno));
  }
  std::fclose(f);
  std::remove(probe.c_str());
  return arrow::Status::OK();
}

arrow::Result<std::unique_ptr<SpillFile>> SpillFile::Create(const std::string& dir,
                                                            const std::shared_ptr<arrow::Schema>& schema) {
  ARROW_RETURN_NOT_OK(CheckSpillDirectory(dir));
  auto file = std::unique_ptr<SpillFile>(new SpillFile());
  file->state_ = std::make_unique<State>();
  file->path_ = NextPath(dir);
  file->dir_ = dir;
  auto out = arrow::io::FileOutputStream::Open(file->path_);
  if (!out.ok()) return file->Error(out.status());
  file->state_->out = std::move(out).ValueUnsafe();
  auto writer = arrow::ipc::MakeFileWriter(file->state_->out, schema);
  if (!writer.ok()) return file->Error(writer.status());
  file->state_->writer = std::move(writer).ValueUnsafe();
  return file;
}

SpillFile::~SpillFile() {
  if (state_) {
    if (state_->writer) (void)state_->writer->Close();
    state_.reset();
  }
  std::remove(path_.c_str());
}

arrow::Status SpillFile::Error(const arrow::Status& cause) const {
  return arrow::Status::IOError("cannot write a spill file in '", dir_, "': ", io::OsReason(cause));
}

arrow::Status SpillFile::Write(const arrow::RecordBatch& batch) {
  auto st = state_->writer->WriteRecordBatch(batch);
  if (!st.ok()) return Error(st);
  ++num_batches_;
  return arrow::Status::OK();
}

arrow::Status SpillFile::FinishWriting() {
  auto st = state_->writer->Close();
  if (!st.ok()) return Error(st);
  state_->writer.reset();
  ARROW_ASSIGN_OR_RAISE(bytes_written_, state_->out->Tell());
  st = state_->out->Close();
  if (!st.ok()) return Error(st);
  ARROW_ASSIGN_OR_RAISE(auto in, arrow::io::ReadableFile::Open(path_));
  ARROW_ASSIGN_OR_RAISE(state_->reader, arrow::ipc::RecordBatchFileReader::Open(in));
  return arrow::Status::OK();
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> SpillFile::ReadBatch(int64_t i) {
  return state_->reader->ReadRecordBatch(static_cast<int>(i));
}

}  // namespace ketch
