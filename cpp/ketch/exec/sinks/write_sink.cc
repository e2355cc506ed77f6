#include "ketch/exec/sinks/write_sink.h"

#include <arrow/compute/api.h>
#include <arrow/csv/writer.h>
#include <arrow/filesystem/filesystem.h>
#include <arrow/io/file.h>
#include <arrow/ipc/writer.h>
#include <parquet/arrow/writer.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <unordered_map>

#include "ketch/exec/morsel.h"
#include "ketch/io/formats/ndjson_writer.h"
#include "ketch/io/local_file.h"
#include "ketch/io/object_store.h"
#include "ketch/io/redact.h"

namespace ketch {

std::string EscapeHivePathSegment(std::string_view value) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (const char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                            c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

namespace {

constexpr const char* kHiveNull = "__HIVE_DEFAULT_PARTITION__";

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

std::string Extension(FileFormat format) {
  switch (format) {
    case FileFormat::kParquet:
      return ".parquet";
    case FileFormat::kCsv:
      return ".csv";
    case FileFormat::kJson:
      return ".json";
    case FileFormat::kLance:  // written by write_lance (pylance), never by this sink
    case FileFormat::kVideo:  // never written
      break;
  }
  return "";
}

arrow::Result<parquet::Compression::type> Codec(const std::string& name) {
  if (name == "snappy") return parquet::Compression::SNAPPY;
  if (name == "zstd") return parquet::Compression::ZSTD;
  if (name == "gzip") return parquet::Compression::GZIP;
  if (name == "lz4") return parquet::Compression::LZ4;
  if (name == "brotli") return parquet::Compression::BROTLI;
  if (name == "none") return parquet::Compression::UNCOMPRESSED;
  return arrow::Status::Invalid("unknown compression ", name);
}

/// One file format's encoder over an output stream (which it does not close).
class FormatWriter {
 public:
  virtual ~FormatWriter() = default;
  virtual arrow::Status Write(const arrow::RecordBatch& batch) = 0;
  virtual arrow::Status Close() = 0;
};

// The Parquet writer keeps the row group it is filling in memory (encoded pages) until it is
// closed: a row group is closed at 256Ki rows or at this many bytes of input, whichever comes
// first, so large values (downloaded files, images) never pile up a whole file in memory.
constexpr int64_t kRowGroupBytes = 64LL << 20;

class ParquetFormatWriter : public FormatWriter {
 public:
  static arrow::Result<std::unique_ptr<FormatWriter>> Make(const arrow::Schema& schema,
                                                           const std::string& codec_name,
                                                           std::shared_ptr<arrow::io::OutputStream> stream) {
    ARROW_ASSIGN_OR_RAISE(auto codec, Codec(codec_name));
    auto props =
        parquet::WriterProperties::Builder().compression(codec)->max_row_group_length(256 * 1024)->build();
    auto arrow_props = parquet::ArrowWriterProperties::Builder().store_schema()->build();
    auto out = std::make_unique<ParquetFormatWriter>();
    ARROW_ASSIGN_OR_RAISE(out->writer_,
                          parquet::arrow::FileWriter::Open(schema, arrow::default_memory_pool(),
                                                           std::move(stream), props, arrow_props));
    return out;
  }

  arrow::Status Write(const arrow::RecordBatch& batch) override {
    // A batch of large values is written in slices, so that a row group outgrows kRowGroupBytes by
    // at most one row.
    const int64_t rows = batch.num_rows();
    const double bytes_per_row =
        std::max(1.0, static_cast<double>(BatchBytes(batch)) / static_cast<double>(rows));
    for (int64_t start = 0; start < rows;) {
      if (row_group_bytes_ >= kRowGroupBytes) {
        ARROW_RETURN_NOT_OK(writer_->NewBufferedRowGroup());  // writes the previous one out
        row_group_bytes_ = 0;
      }
      const auto fit =
          static_cast<int64_t>(static_cast<double>(kRowGroupBytes - row_group_bytes_) / bytes_per_row);
      const int64_t length = std::clamp<int64_t>(fit, 1, rows - start);
      ARROW_RETURN_NOT_OK(writer_->WriteRecordBatch(*batch.Slice(start, length)));
      row_group_bytes_ += static_cast<int64_t>(bytes_per_row * static_cast<double>(length));
      start += length;
    }
    return arrow::Status::OK();
  }

  arrow::Status Close() override { return writer_->Close(); }

 private:
  std::unique_ptr<parquet::arrow::FileWriter> writer_;
  int64_t row_group_bytes_ = 0;  // Arrow bytes written into the row group the writer buffers
};

// CSV through Arrow's CSV writer: a header line, RFC 4180 quoting, nulls as empty fields.
class CsvFormatWriter : public FormatWriter {
 public:
  static arrow::Result<std::unique_ptr<FormatWriter>> Make(const std::shared_ptr<arrow::Schema>& schema,
                                                           std::shared_ptr<arrow::io::OutputStream> stream) {
    auto out = std::make_unique<CsvFormatWriter>();
    ARROW_ASSIGN_OR_RAISE(out->writer_, arrow::csv::MakeCSVWriter(std::move(stream), schema,
                                                                  arrow::csv::WriteOptions::Defaults()));
    return out;
  }
  arrow::Status Write(const arrow::RecordBatch& batch) override { return writer_->WriteRecordBatch(batch); }
  arrow::Status Close() override { return writer_->Close(); }

 private:
  std::shared_ptr<arrow::ipc::RecordBatchWriter> writer_;
};

// Newline-delimited JSON (io::AppendNdjson), written in chunks of about 1 MiB.
class JsonFormatWriter : public FormatWriter {
 public:
  explicit JsonFormatWriter(std::shared_ptr<arrow::io::OutputStream> stream) : stream_(std::move(stream)) {}
  arrow::Status Write(const arrow::RecordBatch& batch) override {
    constexpr int64_t kChunkRows = 1024;
    for (int64_t start = 0; start < batch.num_rows(); start += kChunkRows) {
      ARROW_RETURN_NOT_OK(io::AppendNdjson(*batch.Slice(start, kChunkRows), &buffer_));
      if (buffer_.size() >= (1 << 20)) ARROW_RETURN_NOT_OK(Flush());
    }
    return arrow::Status::OK();
  }
  arrow::Status Close() override { return Flush(); }

 private:
  arrow::Status Flush() {
    if (buffer_.empty()) return arrow::Status::OK();
    ARROW_RETURN_NOT_OK(stream_->Write(buffer_.data(), static_cast<int64_t>(buffer_.size())));
    buffer_.clear();
    return arrow::Status::OK();
  }
  std::shared_ptr<arrow::io::OutputStream> stream_;
  std::string buffer_;
};

// Types the CSV writer cannot put in a field.
bool CsvCanHold(const arrow::DataType& type) {
  if (type.id() == arrow::Type::EXTENSION) return false;
  if (type.id() == arrow::Type::DICTIONARY) {
    return CsvCanHold(*static_cast<const arrow::DictionaryType&>(type).value_type());
  }
  const auto id = type.id();
  return type.num_fields() == 0 && id != arrow::Type::BINARY && id != arrow::Type::LARGE_BINARY &&
         id != arrow::Type::FIXED_SIZE_BINARY && id != arrow::Type::BINARY_VIEW;
}

/// Files a partitioned write keeps open at once.
constexpr size_t kMaxOpenFiles = 128;

/// One file being written: a local temporary (renamed into place by Commit) or an S3 upload.
struct OutFile {
  std::string path;  // the local path it gets, or its s3:// URL
  std::unique_ptr<io::AtomicLocalFile> local;
  std::shared_ptr<arrow::io::OutputStream> remote;
  std::unique_ptr<FormatWriter> writer;
  int64_t rows = 0;
  std::shared_ptr<arrow::RecordBatch> partition_values;  // one row; null without partitioning
};

}  // namespace

struct WriteFilesSink::State {
  WriteInfo info;
  std::string writer_name;                     // "write_parquet", ...
  std::string what;                            // "write_parquet: cannot write"
  std::shared_ptr<arrow::Schema> data_schema;  // the input without the partition columns
  std::vector<int> data_columns;
  std::vector<int> partition_columns;
  std::vector<std::string> escaped_names;     // of the partition columns
  std::shared_ptr<arrow::fs::FileSystem> s3;  // null for local roots
  std::string s3_root;                        // "bucket/key" of root_dir
  std::string prefix;                         // random, shared by the files of this sink
  int64_t counter = 0;
  std::unordered_map<std::string, std::unique_ptr<OutFile>> open;  // by partition directory
  std::vector<std::string> open_order;
  std::vector<std::unique_ptr<OutFile>> complete;  // closed; local ones committed by Finalize
  std::vector<std::string> created_dirs;           // local directories this sink created
  bool committed = false;

  arrow::Status Error(const OutFile& file, const arrow::Status& status) const {
    if (file.local) return file.local->Error(status);
    return arrow::Status::IOError(what, " '", file.path,
                                  "': ", io::Redact(status.message(), info.s3.Secrets()));
  }

  arrow::Status EnsureLocalDir(const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> missing;
    std::error_code ec;
    for (auto p = dir; !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
      missing.push_back(p);
      if (p == p.parent_path()) break;
    }
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      return arrow::Status::IOError(writer_name, ": cannot create directory '", dir.string(),
                                    "': ", ec.message());
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) created_dirs.push_back(it->string());
    return arrow::Status::OK();
  }

  arrow::Result<OutFile*> Open(const std::string& dir, std::shared_ptr<arrow::RecordBatch> partition_values) {
    if (open.size() >= kMaxOpenFiles) {
      // Many partition values: the longest-open file is finished (its key's later rows start a
      // new one), bounding file descriptors and the row groups buffered in memory.
      ARROW_RETURN_NOT_OK(Close(open_order.front(), false));
    }
    auto file = std::make_unique<OutFile>();
    file->partition_values = std::move(partition_values);
    const std::string name = prefix + "-" + std::to_string(counter++) + Extension(info.format);
    std::shared_ptr<arrow::io::OutputStream> stream;
    if (s3) {
      std::string key = s3_root;
      if (!dir.empty()) key += "/" + dir;
      key += "/" + name;
      file->path = "s3://" + key;
      auto opened = s3->OpenOutputStream(key);
      if (!opened.ok()) return Error(*file, opened.status());
      file->remote = *opened;
      stream = file->remote;
    } else {
      std::filesystem::path target(info.root_dir);
      if (!dir.empty()) {
        target /= dir;
        ARROW_RETURN_NOT_OK(EnsureLocalDir(target));
      }
      file->path = (target / name).string();
      ARROW_ASSIGN_OR_RAISE(file->local, io::AtomicLocalFile::Open(file->path, what));
      stream = file->local->stream();
    }
    arrow::Result<std::unique_ptr<FormatWriter>> writer;
    switch (info.format) {
      case FileFormat::kParquet:
        writer = ParquetFormatWriter::Make(*data_schema, info.compression, stream);
        break;
      case FileFormat::kCsv:
        writer = CsvFormatWriter::Make(data_schema, stream);
        break;
      case FileFormat::kJson:
        writer = std::unique_ptr<FormatWriter>(std::make_unique<JsonFormatWriter>(stream));
        break;
      case FileFormat::kLance:
        writer =
            arrow::Status::NotImplemented("Lance datasets are written by write_lance, not the file sink");
        break;
      case FileFormat::kVideo:
        writer = arrow::Status::NotImplemented("video files are not written");
        break;
    }
    if (!writer.ok()) return Error(*file, writer.status());
    file->writer = std::move(writer).ValueUnsafe();
    auto* out = file.get();
    open.emplace(dir, std::move(file));
    open_order.push_back(dir);
    return out;
  }

  // Finishes the file of `dir`; kept for Finalize to commit. An empty one is dropped unless `keep_empty`.
  arrow::Status Close(const std::string& dir, bool keep_empty) {
    auto node = open.extract(dir);
    open_order.erase(std::remove(open_order.begin(), open_order.end(), dir), open_order.end());
    auto file = std::move(node.mapped());
    if (file->rows == 0 && !keep_empty) {
      Discard(*file);
      return arrow::Status::OK();
    }
    auto closed = file->writer->Close();
    file->writer.reset();
    if (closed.ok() && file->remote) closed = file->remote->Close();  // completes the upload
    // A finished local file keeps no descriptor until Finalize renames it (a write of 10,000
    // partition values used to run out of descriptors: the writers left their streams open).
    if (closed.ok() && file->local && !file->local->stream()->closed())
      closed = file->local->stream()->Close();
    if (!closed.ok()) {
      auto error = Error(*file, closed);
      Discard(*file);
      return error;
    }
    complete.push_back(std::move(file));
    return arrow::Status::OK();
  }

  arrow::Status CloseAll(bool keep_empty) {
    while (!open_order.empty()) ARROW_RETURN_NOT_OK(Close(open_order.front(), keep_empty));
    return arrow::Status::OK();
  }

  static void Discard(OutFile& file) {
    file.writer.reset();
    if (file.remote && !file.remote->closed()) (void)file.remote->Abort();  // no object appears
    file.local.reset();                                                     // deletes the temporary
  }

  arrow::Status WriteRows(OutFile& file, const arrow::RecordBatch& batch) {
    auto written = file.writer->Write(batch);
    if (!written.ok()) return Error(file, written);  // e.g. "No space left on device", naming the path
    file.rows += batch.num_rows();
    return arrow::Status::OK();
  }
};

arrow::Result<std::unique_ptr<WriteFilesSink>> WriteFilesSink::Make(WriteInfo info,
                                                                    std::shared_ptr<arrow::Schema> schema) {
  auto sink = std::unique_ptr<WriteFilesSink>(new WriteFilesSink());
  sink->state_ = std::make_unique<State>();
  auto& st = *sink->state_;
  st.writer_name = WriterName(info.format);
  st.what = st.writer_name + ": cannot write";
  st.prefix = RandomHex(16);
  arrow::FieldVector data_fields;
  for (int i = 0; i < schema->num_fields(); ++i) {
    const auto& field = schema->field(i);
    const bool is_partition = std::find(info.partition_cols.begin(), info.partition_cols.end(),
                                        field->name()) != info.partition_cols.end();
    if (is_partition) continue;
    st.data_columns.push_back(i);
    data_fields.push_back(field);
  }
  for (const auto& name : info.partition_cols) {
    const int i = schema->GetFieldIndex(name);
    if (i < 0) return arrow::Status::KeyError(st.writer_name, ": partition column '", name, "' not found");
    st.partition_columns.push_back(i);
    st.escaped_names.push_back(EscapeHivePathSegment(name));
  }
  st.data_schema = arrow::schema(data_fields, schema->metadata());
  if (info.format == FileFormat::kJson)
    ARROW_RETURN_NOT_OK(io::CheckNdjsonSchema(*st.data_schema, st.writer_name));
  if (info.format == FileFormat::kCsv) {
    for (const auto& field : data_fields) {
      if (!CsvCanHold(*field->type())) {
        return arrow::Status::TypeError(st.writer_name, ": column '", field->name(), "' has type ",
                                        field->type()->ToString(),
                                        ", which CSV cannot hold (CSV fields are flat text); exclude or "
                                        "convert it, or write_parquet keeps it");
      }
    }
  }
  st.info = std::move(info);
  if (io::IsS3Url(st.info.root_dir)) {
    ARROW_ASSIGN_OR_RAISE(st.s3, io::S3FileSystemFor(st.info.s3));
    std::string root = st.info.root_dir.substr(5);
    while (!root.empty() && root.back() == '/') root.pop_back();
    st.s3_root = root;
  } else {
    ARROW_RETURN_NOT_OK(st.EnsureLocalDir(st.info.root_dir));
    if (st.partition_columns.empty()) {
      // An unwritable directory fails before any data is read.
      ARROW_RETURN_NOT_OK(st.Open("", nullptr).status());
    }
  }
  return sink;
}

std::string WriteFilesSink::name() const { return "Write" + FileFormatName(state_->info.format); }

WriteFilesSink::~WriteFilesSink() {
  if (!state_) return;
  auto& st = *state_;
  for (auto& [dir, file] : st.open) State::Discard(*file);
  st.open.clear();
  st.complete.clear();  // uncommitted local temporaries are deleted
  if (!st.committed) {
    // Directories this write created and left empty go too (deepest first).
    std::error_code ec;
    for (auto it = st.created_dirs.rbegin(); it != st.created_dirs.rend(); ++it) {
      if (std::filesystem::is_empty(*it, ec)) std::filesystem::remove(*it, ec);
    }
  }
}

arrow::Status WriteFilesSink::BeginPartition(int64_t) {
  auto& st = *state_;
  if (st.partition_columns.empty()) {
    // One file per non-empty partition: the next rows start a new file.
    auto it = st.open.find("");
    if (it != st.open.end() && it->second->rows > 0) return st.Close("", true);
    return arrow::Status::OK();
  }
  return st.CloseAll(false);
}

arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> WriteFilesSink::Push(
    std::shared_ptr<arrow::RecordBatch> morsel) {
  const auto none = std::optional<std::shared_ptr<arrow::RecordBatch>>();
  if (morsel->num_rows() == 0) return none;
  auto& st = *state_;
  if (st.partition_columns.empty()) {
    auto it = st.open.find("");
    OutFile* file = it != st.open.end() ? it->second.get() : nullptr;
    if (!file) {
      ARROW_ASSIGN_OR_RAISE(file, st.Open("", nullptr));
    }
    ARROW_RETURN_NOT_OK(st.WriteRows(*file, *morsel));
    return none;
  }
  // The partition directory of every row.
  std::vector<std::shared_ptr<arrow::Array>> text;
  for (const int c : st.partition_columns) {
    auto cast = arrow::compute::Cast(morsel->column(c), arrow::utf8());
    if (!cast.ok()) {
      return arrow::Status::TypeError(st.writer_name, ": partition column '",
                                      morsel->schema()->field(c)->name(),
                                      "' cannot be written as a directory name: ", cast.status().message());
    }
    text.push_back(cast->make_array());
  }
  std::unordered_map<std::string, std::vector<int64_t>> rows_of;
  std::vector<std::string> order;
  std::string dir;
  for (int64_t row = 0; row < morsel->num_rows(); ++row) {
    dir.clear();
    for (size_t k = 0; k < text.size(); ++k) {
      if (k > 0) dir.push_back('/');
      dir += st.escaped_names[k];
      dir.push_back('=');
      const auto& values = static_cast<const arrow::StringArray&>(*text[k]);
      dir += values.IsNull(row) ? std::string(kHiveNull) : EscapeHivePathSegment(values.GetView(row));
    }
    auto [it, inserted] = rows_of.try_emplace(dir);
    if (inserted) order.push_back(dir);
    it->second.push_back(row);
  }
  ARROW_ASSIGN_OR_RAISE(auto data, morsel->SelectColumns(st.data_columns));
  ARROW_ASSIGN_OR_RAISE(auto keys, morsel->SelectColumns(st.partition_columns));
  for (const auto& key : order) {
    const auto& rows = rows_of[key];
    auto it = st.open.find(key);
    OutFile* file = it != st.open.end() ? it->second.get() : nullptr;
    if (!file) {
      ARROW_ASSIGN_OR_RAISE(file, st.Open(key, keys->Slice(rows.front(), 1)));
    }
    if (order.size() == 1) {
      ARROW_RETURN_NOT_OK(st.WriteRows(*file, *data));
      continue;
    }
    arrow::Int64Builder indices;
    ARROW_RETURN_NOT_OK(indices.AppendValues(rows));
    ARROW_ASSIGN_OR_RAISE(auto index_array, indices.Finish());
    ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(data, index_array));
    ARROW_RETURN_NOT_OK(st.WriteRows(*file, *taken.record_batch()));
  }
  return none;
}

arrow::Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> WriteFilesSink::Finalize() {
  auto& st = *state_;
  if (st.partition_columns.empty()) {
    if (st.open.count("")) ARROW_RETURN_NOT_OK(st.Close("", st.complete.empty()));  // or the one empty file
  } else {
    ARROW_RETURN_NOT_OK(st.CloseAll(false));
  }
  // Every file is complete: only now do the local ones appear under their names.
  for (size_t i = 0; i < st.complete.size(); ++i) {
    if (!st.complete[i]->local) continue;
    auto committed = st.complete[i]->local->Commit();
    if (!committed.ok()) {
      // A rename failed: the files already renamed go too, so no part of the write remains.
      for (size_t j = 0; j < i; ++j) {
        if (st.complete[j]->local) std::remove(st.complete[j]->path.c_str());
      }
      return committed;
    }
  }
  st.committed = true;
  arrow::StringBuilder paths;
  arrow::Int64Builder rows;
  for (const auto& file : st.complete) {
    ARROW_RETURN_NOT_OK(paths.Append(file->path));
    ARROW_RETURN_NOT_OK(rows.Append(file->rows));
  }
  arrow::FieldVector fields = {arrow::field("path", arrow::utf8())};
  arrow::ArrayVector columns;
  ARROW_ASSIGN_OR_RAISE(auto path_array, paths.Finish());
  columns.push_back(path_array);
  const auto n = static_cast<int64_t>(st.complete.size());
  if (n == 0) {
    st.complete.clear();
    return std::vector<std::shared_ptr<arrow::RecordBatch>>{};  // no rows, no file: the plan's schema says
                                                                // the rest
  }
  for (size_t k = 0; k < st.partition_columns.size(); ++k) {
    arrow::ArrayVector pieces;
    for (const auto& file : st.complete)
      pieces.push_back(file->partition_values->column(static_cast<int>(k)));
    ARROW_ASSIGN_OR_RAISE(auto column, arrow::Concatenate(pieces));
    fields.push_back(st.complete.front()->partition_values->schema()->field(static_cast<int>(k)));
    columns.push_back(column);
  }
  ARROW_ASSIGN_OR_RAISE(auto row_array, rows.Finish());
  st.complete.clear();
  fields.push_back(arrow::field("num_rows", arrow::int64()));
  columns.push_back(row_array);
  return std::vector<std::shared_ptr<arrow::RecordBatch>>{
      arrow::RecordBatch::Make(arrow::schema(fields), n, columns)};
}

}  // namespace ketch
