#include "ketch/io/formats/text_formats.h"

#include <arrow/csv/api.h>
#include <arrow/io/api.h>
#include <arrow/json/api.h>

#include <cctype>
#include <functional>
#include <utility>

#include "ketch/io/formats/file_access.h"
#include "ketch/io/formats/text_checks.h"

namespace ketch::io {
namespace {

/// Arrow's readers parse a file in blocks that must each hold at least one whole record (a CSV
/// row, a JSON line). Reads start with Arrow's 1 MiB block; a file with a longer record is read
/// again with a block twice its longest record, up to this cap (Arrow's block sizes are int32).
constexpr int64_t kDefaultBlockBytes = 1 << 20;
constexpr int64_t kMaxBlockBytes = 1LL << 30;
/// Past this block size the JSON reader parses blocks one at a time (each parsing thread holds one).
constexpr int64_t kMaxThreadedJsonBlockBytes = 64LL << 20;

enum class TextKind { kCsv, kJson };

std::unique_ptr<TextChecker> MakeChecker(TextKind kind, const CsvOptions& options) {
  if (kind == TextKind::kCsv && options.escape == 0) return std::make_unique<FastCsvQuoteChecker>(options);
  if (kind == TextKind::kCsv) return std::make_unique<CsvQuoteChecker>(options);
  return std::make_unique<JsonLineChecker>();
}

bool Straddles(const arrow::Status& st) {
  return !st.ok() && st.message().find("straddling object straddles") != std::string::npos;
}

bool NeedsRecheck(const arrow::Status& st) {
  return !st.ok() && st.message().find(kRecheckForRow) != std::string::npos;
}

/// A file opened once ahead (for its size) and handed to the first reader made over it.
using PendingFile = std::shared_ptr<std::shared_ptr<arrow::io::RandomAccessFile>>;

/// `path` opened as a stream whose every block is checked (text_checks.h) before Arrow parses it;
/// `pending` (optional) holds the file already opened for the first reader.
arrow::Result<std::shared_ptr<arrow::io::InputStream>> OpenChecked(const std::string& path,
                                                                   const S3Config& s3,
                                                                   std::atomic<int64_t>* bytes_read,
                                                                   TextKind kind, const CsvOptions& options,
                                                                   const PendingFile& pending = nullptr) {
  std::shared_ptr<arrow::io::RandomAccessFile> file = pending ? std::exchange(*pending, nullptr) : nullptr;
  if (!file) {
    ARROW_ASSIGN_OR_RAISE(file, OpenInputFile(path, s3, bytes_read));
  }
  return std::make_shared<CheckedInputStream>(std::move(file), MakeChecker(kind, options));
}

/// The block size for a file whose records did not fit in the default block: one pass over the
/// whole file measures its longest record (and finds an unterminated quote, whose field would run
/// to the end of the file). Errors: Invalid naming the line when the record is over the cap.
arrow::Result<int64_t> BlockSizeFor(const std::string& path, const S3Config& s3, TextKind kind,
                                    const CsvOptions& options) {
  ARROW_ASSIGN_OR_RAISE(auto file, OpenInputFile(path, s3));
  std::unique_ptr<TextChecker> checker;  // the full checkers: they measure records and name rows
  if (kind == TextKind::kCsv) {
    checker = std::make_unique<CsvQuoteChecker>(options);
  } else {
    checker = std::make_unique<JsonLineChecker>();
  }
  ARROW_RETURN_NOT_OK(CheckWholeStream(file.get(), checker.get()));
  const int64_t longest = checker->longest_record();
  if (longest >= kMaxBlockBytes) {
    return arrow::Status::Invalid(kind == TextKind::kCsv ? "the CSV row" : "the JSON line",
                                  " starting on line ", checker->longest_record_line(), " is ", longest,
                                  " bytes long; Ketch reads records of up to ", kMaxBlockBytes >> 20,
                                  " MiB (Arrow's reader needs a whole record in one block of at most 2 GiB): "
                                  "split that record, or store such values in Parquet");
  }
  int64_t block = kDefaultBlockBytes;
  while (block < 2 * longest && block < kMaxBlockBytes) block *= 2;
  return block;
}

/// The error of a streaming check that asks for the full one (to name the row): the full check's.
arrow::Status Recheck(const arrow::Status& st, const std::function<arrow::Result<int64_t>()>& full_check) {
  auto checked = full_check();
  if (!checked.ok()) return checked.status();
  std::string message = st.message();  // (the checkers disagree: keep the byte offset, drop the marker)
  message.erase(message.find(kRecheckForRow));
  return st.WithMessage(message);
}

/// Makes a reader with the given block size.
using OpenWithBlock = std::function<arrow::Result<std::shared_ptr<arrow::RecordBatchReader>>(int64_t block)>;
using SizeBlock = std::function<arrow::Result<int64_t>()>;

/// Reads through a reader opened with the default block; when a record straddles two blocks
/// (longer than the block), opens the file again with a block that holds its longest record and
/// skips the rows already returned, so the caller sees one uninterrupted stream.
class BlockGrowingReader final : public arrow::RecordBatchReader {
 public:
  BlockGrowingReader(std::shared_ptr<arrow::RecordBatchReader> reader, OpenWithBlock open, SizeBlock size)
      : reader_(std::move(reader)), open_(std::move(open)), size_(std::move(size)) {}

  std::shared_ptr<arrow::Schema> schema() const override { return reader_->schema(); }

  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
    auto st = reader_->ReadNext(batch);
    if (NeedsRecheck(st)) return Recheck(st, size_);
    if (Straddles(st) && !grown_) {
      grown_ = true;
      ARROW_ASSIGN_OR_RAISE(const int64_t block, size_());
      ARROW_ASSIGN_OR_RAISE(reader_, open_(block));
      for (int64_t skip = returned_; true;) {
        ARROW_RETURN_NOT_OK(reader_->ReadNext(batch));
        if (*batch == nullptr || skip == 0) break;
        if ((*batch)->num_rows() <= skip) {
          skip -= (*batch)->num_rows();
          continue;
        }
        *batch = (*batch)->Slice(skip);
        break;
      }
    } else {
      ARROW_RETURN_NOT_OK(st);
    }
    if (*batch != nullptr) returned_ += (*batch)->num_rows();
    return arrow::Status::OK();
  }

 private:
  std::shared_ptr<arrow::RecordBatchReader> reader_;
  OpenWithBlock open_;
  SizeBlock size_;
  int64_t returned_ = 0;
  bool grown_ = false;
};

/// Opens with the default block, growing it (once, to fit the file's longest record) when a record
/// straddles blocks while the reader starts (it reads the first block) or later.
arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenGrowingBlocks(OpenWithBlock open,
                                                                           SizeBlock size) {
  auto first = open(kDefaultBlockBytes);
  if (NeedsRecheck(first.status())) return Recheck(first.status(), size);
  if (Straddles(first.status())) {
    ARROW_ASSIGN_OR_RAISE(const int64_t block, size());
    return open(block);
  }
  ARROW_RETURN_NOT_OK(first.status());
  return std::make_shared<BlockGrowingReader>(*std::move(first), std::move(open), std::move(size));
}

arrow::csv::ParseOptions CsvParseOptions(const CsvOptions& options) {
  auto parse = arrow::csv::ParseOptions::Defaults();
  parse.delimiter = options.delimiter;
  parse.quoting = options.quoting;
  parse.quote_char = options.quote;
  parse.double_quote = options.double_quote;
  parse.escaping = options.escape != 0;
  if (options.escape != 0) parse.escape_char = options.escape;
  parse.newlines_in_values = options.quoting;
  parse.pad_short_rows = options.allow_variable_columns;
  parse.ignore_extra_columns = options.allow_variable_columns;
  return parse;
}

/// A CSV reader over `path` (checked as it is read) with `convert`; `names` replace the header
/// when the file has none, `autogenerate` names columns f0, f1, ... instead.
arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> MakeCsvReader(
    const std::string& path, const S3Config& s3, std::atomic<int64_t>* bytes_read, const CsvOptions& options,
    arrow::csv::ConvertOptions convert, const std::vector<std::string>& names, bool autogenerate = false,
    const PendingFile& pending = nullptr) {
  // Daft's reading: an empty field is null in a numeric, boolean or temporal column and an empty
  // string in a string column ("NA", "null", "NaN" stay strings).
  convert.strings_can_be_null = false;
  convert.null_values = {""};
  auto open = [=](int64_t block) -> arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> {
    ARROW_ASSIGN_OR_RAISE(auto stream, OpenChecked(path, s3, bytes_read, TextKind::kCsv, options, pending));
    auto read = arrow::csv::ReadOptions::Defaults();
    read.use_threads = false;  // serial parsing names a bad row ("Row #N", counting the header)
    read.block_size = static_cast<int32_t>(block);
    read.autogenerate_column_names = autogenerate;
    if (!options.has_header && !autogenerate) read.column_names = names;
    ARROW_ASSIGN_OR_RAISE(auto reader,
                          arrow::csv::StreamingReader::Make(arrow::io::default_io_context(), stream, read,
                                                            CsvParseOptions(options), convert));
    return reader;
  };
  return OpenGrowingBlocks(open, [=] { return BlockSizeFor(path, s3, TextKind::kCsv, options); });
}

// Without a header: Daft's column names column_1, column_2, ... (counted from the first row).
arrow::Result<std::vector<std::string>> HeaderlessNames(const std::string& path, const CsvOptions& options,
                                                        const S3Config& s3) {
  ARROW_ASSIGN_OR_RAISE(auto reader, MakeCsvReader(path, s3, nullptr, options,
                                                   arrow::csv::ConvertOptions::Defaults(), {}, true));
  std::vector<std::string> names;
  for (int i = 0; i < reader->schema()->num_fields(); ++i) names.push_back("column_" + std::to_string(i + 1));
  return names;
}

// True when `text` is valid UTF-8 (what Python and Arrow require of column names).
bool IsUtf8(const std::string& text) {
  JsonLineChecker checker;  // validates every byte; names have no newlines to count
  return checker.Consume(reinterpret_cast<const uint8_t*>(text.data()), static_cast<int64_t>(text.size()))
             .ok() &&
         checker.Finish().ok();
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Schema>> InferCsvSchema(const std::string& path,
                                                             const CsvOptions& options, const S3Config& s3) {
  std::vector<std::string> names;
  if (!options.has_header) {
    ARROW_ASSIGN_OR_RAISE(names, HeaderlessNames(path, options, s3));
  }
  ARROW_ASSIGN_OR_RAISE(
      auto reader, MakeCsvReader(path, s3, nullptr, options, arrow::csv::ConvertOptions::Defaults(), names));
  // Arrow infers binary for a column whose first block holds invalid UTF-8; CSV columns are text
  // (as in Daft), so such a value is an error naming its row when the scan converts it.
  arrow::FieldVector fields = reader->schema()->fields();
  for (auto& field : fields) {
    if (!IsUtf8(field->name())) {
      return arrow::Status::Invalid("CSV parse error: Row #1: the header is not valid UTF-8");
    }
    if (field->type()->id() == arrow::Type::BINARY) field = field->WithType(arrow::utf8());
    if (field->type()->id() == arrow::Type::LARGE_BINARY) field = field->WithType(arrow::large_utf8());
  }
  return arrow::schema(fields, reader->schema()->metadata());
}

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenCsv(
    const std::string& path, const CsvOptions& options, const std::shared_ptr<arrow::Schema>& schema,
    const std::vector<std::string>& columns, const S3Config& s3, std::atomic<int64_t>* bytes_read) {
  ARROW_ASSIGN_OR_RAISE(auto file, OpenInputFile(path, s3, bytes_read));
  ARROW_ASSIGN_OR_RAISE(const int64_t size, file->GetSize());
  if (size == 0) {
    // A 0-byte file (not even a header: a shard without records) has no rows.
    arrow::FieldVector fields;
    for (const auto& name : columns) fields.push_back(schema->GetFieldByName(name));
    return arrow::RecordBatchReader::Make({}, arrow::schema(fields));
  }
  auto convert = arrow::csv::ConvertOptions::Defaults();
  for (const auto& field : schema->fields()) convert.column_types[field->name()] = field->type();
  convert.include_columns = columns;
  std::vector<std::string> names;
  for (const auto& field : schema->fields()) names.push_back(field->name());
  return MakeCsvReader(path, s3, bytes_read, options, convert, names, /*autogenerate=*/false,
                       std::make_shared<std::shared_ptr<arrow::io::RandomAccessFile>>(std::move(file)));
}

arrow::Result<std::shared_ptr<arrow::Schema>> InferJsonSchema(const std::string& path, const S3Config& s3) {
  const CsvOptions unused;
  auto open = [=](int64_t block) -> arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> {
    ARROW_ASSIGN_OR_RAISE(auto stream, OpenChecked(path, s3, nullptr, TextKind::kJson, unused));
    auto read = arrow::json::ReadOptions::Defaults();
    read.use_threads = false;
    read.block_size = static_cast<int32_t>(block);
    ARROW_ASSIGN_OR_RAISE(
        auto reader, arrow::json::StreamingReader::Make(stream, read, arrow::json::ParseOptions::Defaults()));
    return reader;
  };
  ARROW_ASSIGN_OR_RAISE(
      auto reader, OpenGrowingBlocks(open, [=] { return BlockSizeFor(path, s3, TextKind::kJson, unused); }));
  return reader->schema();
}

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenJson(
    const std::string& path, const std::shared_ptr<arrow::Schema>& schema,
    const std::vector<std::string>& columns, const S3Config& s3, std::atomic<int64_t>* bytes_read) {
  auto parse = arrow::json::ParseOptions::Defaults();
  arrow::FieldVector fields;
  for (const auto& name : columns) {
    auto field = schema->GetFieldByName(name);
    if (!field) return arrow::Status::KeyError("column '", name, "' is not in the JSON schema");
    fields.push_back(field);
  }
  parse.explicit_schema = arrow::schema(fields);
  parse.unexpected_field_behavior = arrow::json::UnexpectedFieldBehavior::Ignore;
  // A file with no JSON values at all (empty, or blank lines only: a shard without records) has
  // no rows; Arrow's reader refuses such a stream.
  ARROW_ASSIGN_OR_RAISE(auto file, OpenInputFile(path, s3, bytes_read));
  ARROW_ASSIGN_OR_RAISE(const int64_t size, file->GetSize());
  if (size <= 4096) {
    ARROW_ASSIGN_OR_RAISE(auto uncounted, OpenInputFile(path, s3));  // the check is not the scan's read
    ARROW_ASSIGN_OR_RAISE(auto head, uncounted->ReadAt(0, size));
    bool blank = true;
    for (int64_t i = 0; i < head->size() && blank; ++i) blank = std::isspace(head->data()[i]) != 0;
    if (blank) {
      ARROW_ASSIGN_OR_RAISE(auto empty, arrow::RecordBatchReader::Make({}, parse.explicit_schema));
      return empty;
    }
  }
  const CsvOptions unused;
  auto pending = std::make_shared<std::shared_ptr<arrow::io::RandomAccessFile>>(std::move(file));
  auto open = [=](int64_t block) -> arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> {
    ARROW_ASSIGN_OR_RAISE(auto stream, OpenChecked(path, s3, bytes_read, TextKind::kJson, unused, pending));
    auto read = arrow::json::ReadOptions::Defaults();
    read.use_threads = block <= kMaxThreadedJsonBlockBytes;
    read.block_size = static_cast<int32_t>(block);
    ARROW_ASSIGN_OR_RAISE(auto reader, arrow::json::StreamingReader::Make(stream, read, parse));
    return reader;
  };
  return OpenGrowingBlocks(open, [=] { return BlockSizeFor(path, s3, TextKind::kJson, unused); });
}

}  // namespace ketch::io
