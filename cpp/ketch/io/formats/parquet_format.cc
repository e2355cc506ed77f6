#include "ketch/io/formats/parquet_format.h"

#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>

#include <algorithm>

#include "ketch/io/formats/file_access.h"

namespace ketch::io {
namespace {

void CollectLeaves(const parquet::arrow::SchemaField& field, std::vector<int>* out) {
  if (field.column_index >= 0) out->push_back(field.column_index);
  for (const auto& child : field.children) CollectLeaves(child, out);
}

// The leaf column indices of a top-level column (by name), through the footer's schema tree.
std::vector<int> LeavesOf(const parquet::SchemaDescriptor& schema, const std::string& name) {
  std::vector<int> out;
  for (int i = 0; i < schema.num_columns(); ++i) {
    const auto column_path = schema.Column(i)->path();  // keep alive: ToDotVector may borrow from it
    const std::vector<std::string> parts = column_path->ToDotVector();
    if (!parts.empty() && parts[0] == name) out.push_back(i);
  }
  return out;
}

// True when every data page of a top-level string/binary column in these row groups is
// dictionary-encoded (page encoding stats): reading it as an Arrow dictionary then skips building
// one string per row, and the scan expands only the rows that pass its filter.
bool FullyDictionaryEncoded(const parquet::FileMetaData& metadata, const std::vector<int>& row_groups,
                            int leaf) {
  const auto* column = metadata.schema()->Column(leaf);
  if (column->physical_type() != parquet::Type::BYTE_ARRAY || column->max_repetition_level() > 0 ||
      column->path()->ToDotVector().size() != 1) {
    return false;
  }
  for (int rg : row_groups) {
    auto chunk = metadata.RowGroup(rg)->ColumnChunk(leaf);
    const auto& stats = chunk->encoding_stats();
    if (!chunk->has_dictionary_page()) return false;
    if (stats.empty()) {
      // No page statistics (e.g. DuckDB's writer): trust the chunk's encodings when every one is a
      // dictionary or level encoding (a PLAIN page could be a fallback from the dictionary).
      for (auto encoding : chunk->encodings()) {
        if (encoding != parquet::Encoding::PLAIN_DICTIONARY &&
            encoding != parquet::Encoding::RLE_DICTIONARY && encoding != parquet::Encoding::RLE &&
            encoding != parquet::Encoding::BIT_PACKED) {
          return false;
        }
      }
      continue;
    }
    for (const auto& page : stats) {
      const bool data_page =
          page.page_type == parquet::PageType::DATA_PAGE || page.page_type == parquet::PageType::DATA_PAGE_V2;
      if (data_page && page.encoding != parquet::Encoding::PLAIN_DICTIONARY &&
          page.encoding != parquet::Encoding::RLE_DICTIONARY) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

arrow::Result<std::shared_ptr<parquet::FileMetaData>> ReadParquetMetadata(const std::string& path,
                                                                          const S3Config& s3,
                                                                          int64_t size_bytes) {
  ARROW_ASSIGN_OR_RAISE(auto file, OpenInputFile(path, s3, nullptr, size_bytes));
  // An S3 object is read at the size its listing gave: one replaced since reads the wrong bytes.
  const std::string listed = IsS3Url(path) && size_bytes >= 0
                                 ? " (read at the size read_parquet listed, " + std::to_string(size_bytes) +
                                       " bytes: if the object was replaced since, call read_parquet again)"
                                 : "";
  try {
    return parquet::ReadMetaData(file);
  } catch (const parquet::ParquetStatusException& e) {
    if (e.status().IsIOError()) {  // the read failed (e.g. no such key): not a format problem
      return arrow::Status::IOError("cannot read '", path, "': ", e.status().message(), listed);
    }
    return arrow::Status::IOError("'", path, "' is not a valid Parquet file: ", e.what(), listed);
  } catch (const std::exception& e) {
    return arrow::Status::IOError("'", path, "' is not a valid Parquet file: ", e.what(), listed);
  }
}

arrow::Result<std::shared_ptr<arrow::Schema>> ParquetArrowSchema(const parquet::FileMetaData& metadata) {
  std::shared_ptr<arrow::Schema> schema;
  parquet::ArrowReaderProperties props;
  ARROW_RETURN_NOT_OK(
      parquet::arrow::FromParquetSchema(metadata.schema(), props, metadata.key_value_metadata(), &schema));
  // Columns stored as Arrow dictionaries (pandas Categorical) are their values to the engine;
  // the scan expands them as it reads.
  arrow::FieldVector fields = schema->fields();
  for (auto& field : fields) {
    if (field->type()->id() == arrow::Type::DICTIONARY) {
      field = field->WithType(static_cast<const arrow::DictionaryType&>(*field->type()).value_type());
    }
  }
  return arrow::schema(fields, schema->metadata());
}

namespace {
/// Row groups whose selected column chunks are larger than this (compressed) are streamed page by
/// page instead of pre-buffered whole.
constexpr int64_t kPreBufferMaxBytes = 64LL << 20;
}  // namespace

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> OpenParquetRowGroups(
    const std::string& path, const S3Config& s3, int64_t size_bytes,
    std::shared_ptr<parquet::FileMetaData> metadata, const std::vector<int>& row_groups,
    const std::vector<std::string>& columns, int64_t batch_rows, bool use_threads,
    std::atomic<int64_t>* bytes_read, bool read_dictionaries) {
  ARROW_ASSIGN_OR_RAISE(auto file, OpenInputFile(path, s3, bytes_read, size_bytes));
  parquet::ArrowReaderProperties arrow_props;
  arrow_props.set_batch_size(batch_rows);
  // Pre-buffering reads every selected column chunk of the row groups whole before the first
  // batch: right for small row groups (fewer, coalesced reads), but a 300 MB row group was then
  // held compressed for as long as its batches were used, once per scan task reading a range of
  // it (peak 902 MB against pyarrow's 210 MB). Large ones stream their pages through an 8 MiB
  // buffer instead.
  int64_t chunk_bytes = 0;
  if (metadata) {
    for (int rg : row_groups) chunk_bytes += ParquetRowGroupBytes(*metadata, rg, columns);
  }
  const bool stream_pages = chunk_bytes > kPreBufferMaxBytes;
  arrow_props.set_pre_buffer(!stream_pages);
  arrow_props.set_use_threads(use_threads);
  if (read_dictionaries) {
    for (const auto& name : columns) {
      for (int leaf : LeavesOf(*metadata->schema(), name)) {
        if (FullyDictionaryEncoded(*metadata, row_groups, leaf)) arrow_props.set_read_dictionary(leaf, true);
      }
    }
  }
  // Pages written with a CRC (e.g. pyarrow's write_page_checksum=True) are verified: a damaged page
  // fails naming its row group instead of decoding to wrong values. Pages without one are not.
  parquet::ReaderProperties props = parquet::default_reader_properties();
  props.set_page_checksum_verification(true);
  if (stream_pages) {
    props.enable_buffered_stream();
    props.set_buffer_size(8 << 20);
  }
  parquet::arrow::FileReaderBuilder builder;
  try {
    PARQUET_THROW_NOT_OK(builder.Open(file, props, std::move(metadata)));
  } catch (const std::exception& e) {
    return arrow::Status::IOError("not a valid Parquet file: ", e.what());
  }
  builder.properties(arrow_props);
  std::unique_ptr<parquet::arrow::FileReader> reader;
  ARROW_ASSIGN_OR_RAISE(reader, builder.Build());
  std::shared_ptr<arrow::Schema> file_schema;
  ARROW_RETURN_NOT_OK(reader->GetSchema(&file_schema));
  std::vector<int> leaves;
  for (const auto& name : columns) {
    int index = file_schema->GetFieldIndex(name);
    if (index < 0) return arrow::Status::KeyError("column '", name, "' is missing from this file");
    CollectLeaves(reader->manifest().schema_fields[index], &leaves);
  }
  std::sort(leaves.begin(), leaves.end());
  std::shared_ptr<arrow::RecordBatchReader> out;
  ARROW_ASSIGN_OR_RAISE(out, reader->GetRecordBatchReader(row_groups, leaves));
  // The batch reader borrows the FileReader: keep both alive together.
  struct Holder : arrow::RecordBatchReader {
    std::unique_ptr<parquet::arrow::FileReader> reader;
    std::shared_ptr<arrow::RecordBatchReader> batches;
    std::shared_ptr<arrow::Schema> schema() const override { return batches->schema(); }
    arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
      try {
        return batches->ReadNext(batch);
      } catch (const std::exception& e) {
        return arrow::Status::IOError(e.what());
      }
    }
  };
  auto holder = std::make_shared<Holder>();
  holder->reader = std::move(reader);
  holder->batches = std::move(out);
  return holder;
}

int64_t ParquetRowGroupBytes(const parquet::FileMetaData& metadata, int row_group,
                             const std::vector<std::string>& columns) {
  auto rg = metadata.RowGroup(row_group);
  int64_t bytes = 0;
  if (columns.empty()) {
    for (int i = 0; i < rg->num_columns(); ++i) bytes += rg->ColumnChunk(i)->total_compressed_size();
    return bytes;
  }
  for (const auto& name : columns) {
    for (int leaf : LeavesOf(*metadata.schema(), name))
      bytes += rg->ColumnChunk(leaf)->total_compressed_size();
  }
  return bytes;
}

}  // namespace ketch::io
