#include "ketch/exec/sinks/sinks.h"

#include <arrow/io/file.h>
#include <parquet/arrow/writer.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>

#include "ketch/exec/morsel.h"
#include "ketch/io/local_file.h"

namespace ketch {

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> LimitSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  if (remaining_ <= 0) return std::optional<std::shared_ptr<arrow::RecordBatch>>();
  if (morsel->num_rows() > remaining_) morsel = morsel->Slice(0, remaining_);
  remaining_ -= morsel->num_rows();
  return std::optional<std::shared_ptr<arrow::RecordBatch>>(std::move(morsel));
}

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> CollectSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  const bool kept_empty =
      !batches_.empty() && partitions_.back() == partition_ && batches_.back()->num_rows() == 0;
  if (morsel->num_rows() == 0) {
    // Kept only to announce its partition (and, first of all, the schema).
    if (!announced_ && !kept_empty) {
      batches_.push_back(std::move(morsel));
      partitions_.push_back(partition_);
    }
  } else {
    if (kept_empty) {  // the partition has rows after all: its announcement goes
      batches_.pop_back();
      partitions_.pop_back();
    }
    batches_.push_back(std::move(morsel));
    partitions_.push_back(partition_);
  }
  announced_ = true;
  return std::optional<std::shared_ptr<arrow::RecordBatch>>();
}

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> ConsumerSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  if (morsel->num_rows() > 0 || !announced_) {
    announced_ = true;
    ARROW_RETURN_NOT_OK(consumer_->Consume(partition_, std::move(morsel)));
  }
  return std::optional<std::shared_ptr<arrow::RecordBatch>>();
}

namespace {

std::string RandomHex(int bytes) {
  std::random_device rd;
  std::string out;
  static const char* kDigits = "0123456789abcdef";
  for (int i = 0; i < bytes; ++i) {
    auto v = rd() & 0xFF;
    out.push_back(kDigits[v >> 4]);
    out.push_back(kDigits[v & 0xF]);
  }
  return out;
}

constexpr const char* kCannotWrite = "write_parquet: cannot write";

arrow::Result<parquet::Compression::type> Codec(const std::string& name) {
  if (name == "snappy") return parquet::Compression::SNAPPY;
  if (name == "zstd") return parquet::Compression::ZSTD;
  if (name == "gzip") return parquet::Compression::GZIP;
  if (name == "lz4") return parquet::Compression::LZ4;
  if (name == "brotli") return parquet::Compression::BROTLI;
  if (name == "none") return parquet::Compression::UNCOMPRESSED;
  return arrow::Status::Invalid("unknown compression ", name);
}

}  // namespace

struct WriteParquetSink::State {
  WriteParquetInfo info;
  std::shared_ptr<arrow::Schema> schema;
  std::string prefix;  // random, shared by the files of this write
  std::unique_ptr<io::AtomicLocalFile>
      file;  // the file being written; deletes its temporary unless committed
  std::unique_ptr<parquet::arrow::FileWriter> writer;
  int64_t rows = 0;             // rows written into `file`
  int64_t row_group_bytes = 0;  // Arrow bytes written into the row group the writer buffers
  std::vector<std::unique_ptr<io::AtomicLocalFile>> complete;  // closed, committed by Finalize
};

// The writer keeps the row group it is filling in memory (encoded pages) until it is closed: a
// row group is closed at 256Ki rows or at this many bytes of input, whichever comes first, so
// large values (downloaded files, images) never pile up a whole file in memory.
constexpr int64_t kRowGroupBytes = 64LL << 20;

arrow::Result<std::unique_ptr<WriteParquetSink>> WriteParquetSink::Make(
    WriteParquetInfo info, std::shared_ptr<arrow::Schema> schema) {
  std::error_code ec;
  std::filesystem::create_directories(info.root_dir, ec);
  if (ec) {
    return arrow::Status::IOError("write_parquet: cannot create directory '", info.root_dir,
                                  "': ", ec.message());
  }
  ARROW_RETURN_NOT_OK(Codec(info.compression).status());
  auto sink = std::unique_ptr<WriteParquetSink>(new WriteParquetSink());
  sink->state_ = std::make_unique<State>();
  auto& st = *sink->state_;
  st.prefix = RandomHex(16);
  st.info = std::move(info);
  st.schema = std::move(schema);
  ARROW_RETURN_NOT_OK(sink->OpenFile());  // an unwritable directory fails before any data is read
  return sink;
}

arrow::Status WriteParquetSink::OpenFile() {
  auto& st = *state_;
  const std::string name = st.prefix + "-" + std::to_string(st.complete.size()) + ".parquet";
  ARROW_ASSIGN_OR_RAISE(
      st.file,
      io::AtomicLocalFile::Open((std::filesystem::path(st.info.root_dir) / name).string(), kCannotWrite));
  ARROW_ASSIGN_OR_RAISE(auto codec, Codec(st.info.compression));
  // Row groups of 256Ki rows: the writer buffers one row group, so this bounds its memory.
  auto props =
      parquet::WriterProperties::Builder().compression(codec)->max_row_group_length(256 * 1024)->build();
  auto arrow_props = parquet::ArrowWriterProperties::Builder().store_schema()->build();
  auto writer = parquet::arrow::FileWriter::Open(*st.schema, arrow::default_memory_pool(), st.file->stream(),
                                                 props, arrow_props);
  if (!writer.ok()) return st.file->Error(writer.status());
  st.writer = std::move(writer).ValueUnsafe();
  st.rows = 0;
  st.row_group_bytes = 0;
  return arrow::Status::OK();
}

// Closes the current file; it is kept for Finalize to commit.
arrow::Status WriteParquetSink::CloseFile() {
  auto& st = *state_;
  auto closed = st.writer->Close();
  st.writer.reset();
  if (!closed.ok()) return st.file->Error(closed);
  st.complete.push_back(std::move(st.file));
  return arrow::Status::OK();
}

WriteParquetSink::~WriteParquetSink() {
  // Uncommitted files (an error, a cancelled query) are deleted by AtomicLocalFile.
  if (state_ && state_->writer && state_->file) (void)state_->writer->Close();
}

arrow::Status WriteParquetSink::BeginPartition(int64_t partition) {
  // One file per non-empty partition: the next rows start a new file.
  if (state_->writer && state_->rows > 0) return CloseFile();
  return arrow::Status::OK();
}

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> WriteParquetSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  if (morsel->num_rows() == 0) return std::optional<std::shared_ptr<arrow::RecordBatch>>();
  auto& st = *state_;
  if (!st.writer) ARROW_RETURN_NOT_OK(OpenFile());
  // A morsel of large values is written in slices, so that a row group outgrows kRowGroupBytes by
  // at most one row.
  const int64_t rows = morsel->num_rows();
  const double bytes_per_row =
      std::max(1.0, static_cast<double>(BatchBytes(*morsel)) / static_cast<double>(rows));
  for (int64_t start = 0; start < rows;) {
    if (st.row_group_bytes >= kRowGroupBytes) {
      auto flushed = st.writer->NewBufferedRowGroup();  // writes the previous one out
      if (!flushed.ok()) return st.file->Error(flushed);
      st.row_group_bytes = 0;
    }
    const auto fit =
        static_cast<int64_t>(static_cast<double>(kRowGroupBytes - st.row_group_bytes) / bytes_per_row);
    const int64_t length = std::clamp<int64_t>(fit, 1, rows - start);
    auto written = st.writer->WriteRecordBatch(*morsel->Slice(start, length));
    if (!written.ok()) return st.file->Error(written);  // e.g. "No space left on device", naming the path
    st.row_group_bytes += static_cast<int64_t>(bytes_per_row * static_cast<double>(length));
    st.rows += length;
    start += length;
  }
  return std::optional<std::shared_ptr<arrow::RecordBatch>>();
}

arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> WriteParquetSink::Finalize() {
  auto& st = *state_;
  if (st.writer) {
    if (st.rows > 0 || st.complete.empty()) {
      ARROW_RETURN_NOT_OK(CloseFile());  // the last partition's file, or the one empty file
    } else {
      (void)st.writer->Close();  // an empty trailing file: its temporary is deleted
      st.writer.reset();
      st.file.reset();
    }
  }
  // Every file is complete: only now do they appear under their names.
  arrow::StringBuilder paths;
  for (size_t i = 0; i < st.complete.size(); ++i) {
    auto committed = st.complete[i]->Commit();
    if (!committed.ok()) {
      // A rename failed: the files already renamed go too, so no part of the write remains.
      for (size_t j = 0; j < i; ++j) std::remove(st.complete[j]->path().c_str());
      return committed;
    }
    ARROW_RETURN_NOT_OK(paths.Append(st.complete[i]->path()));
  }
  const auto n = static_cast<int64_t>(st.complete.size());
  st.complete.clear();
  ARROW_ASSIGN_OR_RAISE(auto array, paths.Finish());
  return std::vector<std::shared_ptr<arrow::RecordBatch>>{
      arrow::RecordBatch::Make(arrow::schema({arrow::field("path", arrow::utf8())}), n, {array})};
}

}  // namespace ketch
