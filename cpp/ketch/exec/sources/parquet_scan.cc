#include "ketch/exec/sources/parquet_scan.h"

#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/exception.h>

#include <algorithm>
#include <numeric>
#include <set>

namespace ketch {
namespace {

arrow::Result<std::unique_ptr<parquet::arrow::FileReader>> OpenReader(const std::string& path,
                                                                      int64_t batch_rows) {
  ARROW_ASSIGN_OR_RAISE(auto file, arrow::io::ReadableFile::Open(path));
  parquet::ArrowReaderProperties arrow_props;
  arrow_props.set_batch_size(batch_rows);
  arrow_props.set_pre_buffer(true);
  parquet::arrow::FileReaderBuilder builder;
  ARROW_RETURN_NOT_OK(builder.Open(file));
  builder.properties(arrow_props);
  std::unique_ptr<parquet::arrow::FileReader> reader;
  ARROW_ASSIGN_OR_RAISE(reader, builder.Build());
  return reader;
}

void CollectLeaves(const parquet::arrow::SchemaField& field, std::vector<int>* out) {
  if (field.column_index >= 0) out->push_back(field.column_index);
  for (const auto& child : field.children) CollectLeaves(child, out);
}

// The source rows (offset + i) that a filter mask keeps.
arrow::Result<std::shared_ptr<arrow::Int64Array>> FilterRowIds(int64_t offset,
                                                               const std::shared_ptr<arrow::Array>& mask) {
  arrow::Int64Builder ids;
  ARROW_RETURN_NOT_OK(ids.Reserve(mask->length()));
  for (int64_t i = 0; i < mask->length(); ++i) ids.UnsafeAppend(offset + i);
  ARROW_ASSIGN_OR_RAISE(auto all, ids.Finish());
  ARROW_ASSIGN_OR_RAISE(auto kept, arrow::compute::Filter(all, mask));
  return std::static_pointer_cast<arrow::Int64Array>(kept.make_array());
}

arrow::Status WithPath(const arrow::Status& st, const std::string& path) {
  if (st.ok()) return st;
  return st.WithMessage("read_parquet: file '", path, "': ", st.message());
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Schema>> ReadParquetSchema(const std::string& path) {
  auto reader = OpenReader(path, 1024);
  if (!reader.ok()) return WithPath(reader.status(), path);
  std::shared_ptr<arrow::Schema> schema;
  auto st = (*reader)->GetSchema(&schema);
  if (!st.ok()) return WithPath(st, path);
  return schema;
}

arrow::Status ParquetScanSource::Produce(const Emit& emit) {
  for (const auto& path : info_.paths) {
    auto st = ReadFile(path, emit);
    if (st.IsCancelled()) return arrow::Status::OK();
    ARROW_RETURN_NOT_OK(WithPath(st, path));
  }
  return arrow::Status::OK();
}

arrow::Status ParquetScanSource::ReadFile(const std::string& path, const Emit& emit) {
  ARROW_ASSIGN_OR_RAISE(auto reader, OpenReader(path, batch_rows_));
  std::shared_ptr<arrow::Schema> file_schema;
  ARROW_RETURN_NOT_OK(reader->GetSchema(&file_schema));

  std::set<std::string> needed;
  for (const auto& field : output_schema_->fields()) needed.insert(field->name());
  if (info_.filter) info_.filter->CollectColumns(&needed);
  std::vector<int> leaves;
  for (const auto& name : needed) {
    int index = file_schema->GetFieldIndex(name);
    if (index < 0) return arrow::Status::KeyError("column '", name, "' is missing from this file");
    CollectLeaves(reader->manifest().schema_fields[index], &leaves);
  }
  if (leaves.empty() && file_schema->num_fields() > 0) {
    // No column is needed (e.g. count_rows): read the first one for the row counts.
    CollectLeaves(reader->manifest().schema_fields[0], &leaves);
  }
  std::sort(leaves.begin(), leaves.end());
  std::vector<int> row_groups(reader->num_row_groups());
  std::iota(row_groups.begin(), row_groups.end(), 0);
  ARROW_ASSIGN_OR_RAISE(auto batches, reader->GetRecordBatchReader(row_groups, leaves));
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    ARROW_RETURN_NOT_OK(batches->ReadNext(&batch));
    if (!batch) break;
    const int64_t offset = rows_read_;
    rows_read_ += batch->num_rows();
    std::shared_ptr<arrow::Int64Array> source_rows;
    if (info_.filter) {
      ARROW_ASSIGN_OR_RAISE(auto mask,
                            Evaluate(*info_.filter, *batch, EvalContext{offset, batch->num_rows(), nullptr}));
      ARROW_ASSIGN_OR_RAISE(auto filtered, arrow::compute::Filter(batch, mask));
      batch = filtered.record_batch();
      ARROW_ASSIGN_OR_RAISE(source_rows, FilterRowIds(offset, mask));
    }
    arrow::ArrayVector columns;
    for (const auto& field : output_schema_->fields()) {
      ARROW_ASSIGN_OR_RAISE(auto column, GetColumn(*batch, field->name()));
      if (!column->type()->Equals(*field->type())) {
        return arrow::Status::TypeError("column '", field->name(), "' has type ", column->type()->ToString(),
                                        " here but ", field->type()->ToString(), " in the first file");
      }
      columns.push_back(column);
    }
    ARROW_RETURN_NOT_OK(
        emit(arrow::RecordBatch::Make(output_schema_, batch->num_rows(), columns), offset, source_rows));
  }
  return arrow::Status::OK();
}

}  // namespace ketch
