// Scans in plan bytes, writer and reader side by side: files, format options, pushdowns and the
// Parquet footers read at plan time. Credentials are in s3_config_serde.cc.

#include "ketch/distributed/serde/plan_serde_internal.h"
#include "ketch/io/formats/parquet_footers.h"

namespace ketch::serde::internal {

// --- Writing ---

arrow::Result<Offset<fb::Scan>> PlanWriter::WriteScan(const ScanInfo& scan) {
  std::vector<Offset<fb::ScanFile>> files;
  for (const auto& file : scan.files) {
    auto path = fbb_.CreateString(file.path);
    files.push_back(fb::CreateScanFile(fbb_, path, file.size_bytes, file.fragment_id, file.num_rows));
  }
  auto files_offset = fbb_.CreateVector(files);
  // Hive partition values: one row per file.
  Offset<Vector<uint8_t>> partition_values;
  const size_t num_values = scan.files.empty() ? 0 : scan.files[0].partition_values.size();
  if (num_values > 0) {
    arrow::FieldVector fields;
    arrow::ArrayVector columns;
    for (size_t c = 0; c < num_values; ++c) {
      const auto& first = scan.files[0].partition_values[c];
      if (!first) return arrow::Status::Invalid("plan serialization: scan file without a partition value");
      std::unique_ptr<arrow::ArrayBuilder> builder;
      ARROW_ASSIGN_OR_RAISE(builder, arrow::MakeBuilder(first->type));
      for (const auto& file : scan.files) {
        if (file.partition_values.size() != num_values || !file.partition_values[c]) {
          return arrow::Status::Invalid("plan serialization: scan files have different numbers of ",
                                        "partition values");
        }
        ARROW_RETURN_NOT_OK(builder->AppendScalar(*file.partition_values[c]));
      }
      ARROW_ASSIGN_OR_RAISE(auto column, builder->Finish());
      fields.push_back(arrow::field("p" + std::to_string(c), first->type));
      columns.push_back(std::move(column));
    }
    auto schema = arrow::schema(fields);
    ARROW_ASSIGN_OR_RAISE(
        auto bytes, StreamBytes(schema, {arrow::RecordBatch::Make(
                                            schema, static_cast<int64_t>(scan.files.size()), columns)}));
    ARROW_ASSIGN_OR_RAISE(partition_values, Bytes(*bytes));
  }
  if (!scan.file_schema) return arrow::Status::Invalid("plan serialization: scan without a schema");
  ARROW_ASSIGN_OR_RAISE(auto file_schema_bytes, SchemaBytes(*scan.file_schema));
  ARROW_ASSIGN_OR_RAISE(auto file_schema, Bytes(*file_schema_bytes));
  Offset<Vector<uint8_t>> partition_schema, parse_schema;
  if (scan.partition_schema) {
    ARROW_ASSIGN_OR_RAISE(auto bytes, SchemaBytes(*scan.partition_schema));
    ARROW_ASSIGN_OR_RAISE(partition_schema, Bytes(*bytes));
  }
  if (scan.parse_schema) {
    ARROW_ASSIGN_OR_RAISE(auto bytes, SchemaBytes(*scan.parse_schema));
    ARROW_ASSIGN_OR_RAISE(parse_schema, Bytes(*bytes));
  }
  Offset<Vector<Offset<flatbuffers::String>>> columns;
  if (scan.columns) columns = StringList(*scan.columns);
  Offset<fb::Expr> filter;
  if (scan.filter) {
    ARROW_ASSIGN_OR_RAISE(filter, WriteExpr(scan.filter));
  }
  const auto& csv = scan.csv;
  auto csv_offset = fb::CreateCsvOptions(
      fbb_, csv.has_header, static_cast<int8_t>(csv.delimiter), static_cast<int8_t>(csv.quote), csv.quoting,
      static_cast<int8_t>(csv.escape), csv.double_quote, csv.allow_variable_columns);
  auto s3_offset = WriteS3(scan.s3);
  Offset<fb::ScanTasks> tasks;
  if (scan.tasks) {
    std::vector<Offset<fb::ScanTask>> list;
    for (const auto& task : scan.tasks->tasks) {
      auto row_groups = fbb_.CreateVector(task.row_groups);
      list.push_back(fb::CreateScanTask(fbb_, task.file, row_groups, task.first_row, task.num_rows,
                                        task.size_bytes, task.group, task.row_offset, task.row_count,
                                        task.range_index, task.range_count));
    }
    auto list_offset = fbb_.CreateVector(list);
    auto reason = fbb_.CreateString(scan.tasks->reason);
    // The footers of the files the tasks read, once each.
    const auto& metadata = scan.tasks->metadata;
    std::vector<bool> sent(metadata.size(), false);
    std::vector<Offset<fb::Footer>> footers;
    for (const auto& task : scan.tasks->tasks) {
      const auto f = static_cast<size_t>(task.file);
      if (task.file < 0 || f >= metadata.size() || !metadata[f] || sent[f]) continue;
      sent[f] = true;
      ARROW_ASSIGN_OR_RAISE(auto thrift, FooterBytes(*metadata[f]));
      ARROW_ASSIGN_OR_RAISE(auto thrift_offset, Bytes(*thrift));
      footers.push_back(fb::CreateFooter(fbb_, task.file, thrift_offset));
    }
    auto footers_offset = fbb_.CreateVector(footers);
    tasks = fb::CreateScanTasks(fbb_, list_offset, reason, scan.tasks->files_pruned,
                                scan.tasks->row_groups_total, scan.tasks->row_groups_pruned,
                                scan.tasks->limit_skipped_row_groups, footers_offset);
  }
  Offset<fb::LanceOptions> lance;
  if (scan.format == FileFormat::kLance) {
    std::vector<std::string> keys, values;
    for (const auto& [key, value] : scan.lance.storage_options) {
      keys.push_back(key);
      values.push_back(value);
    }
    auto uri = fbb_.CreateString(scan.lance.uri);
    auto keys_offset = StringList(keys);
    auto values_offset = StringList(values);
    Offset<fb::LanceNearest> nearest;
    if (const auto& search = scan.lance.nearest) {
      auto column = fbb_.CreateString(search->column);
      auto query = fbb_.CreateVector(search->query);
      auto metric = fbb_.CreateString(search->metric);
      auto index_name = fbb_.CreateString(search->index_name);
      auto index_type = fbb_.CreateString(search->index_type);
      nearest = fb::CreateLanceNearest(fbb_, column, query, search->k, metric, index_name, index_type,
                                       search->nprobes, search->refine_factor);
    }
    std::vector<std::string> names, types, columns, metrics;
    for (const auto& index : scan.lance.vector_indexes) {
      names.push_back(index.name);
      types.push_back(index.index_type);
      columns.push_back(index.column);
      metrics.push_back(index.metric);
    }
    auto names_offset = StringList(names);
    auto types_offset = StringList(types);
    auto columns_offset = StringList(columns);
    auto metrics_offset = StringList(metrics);
    auto note = fbb_.CreateString(scan.lance.nearest_note);
    lance = fb::CreateLanceOptions(fbb_, uri, scan.lance.version, keys_offset, values_offset, nearest,
                                   names_offset, types_offset, columns_offset, metrics_offset, note);
  }
  Offset<fb::VideoOptions> video;
  if (scan.format == FileFormat::kVideo) {
    const VideoScanOptions& v = scan.video;
    video = fb::CreateVideoOptions(fbb_, v.image_height, v.image_width, v.is_key_frame.has_value(),
                                   v.is_key_frame.value_or(false), v.start_time, v.end_time.has_value(),
                                   v.end_time.value_or(0), v.sample_interval_seconds.has_value(),
                                   v.sample_interval_seconds.value_or(0));
  }
  return fb::CreateScan(fbb_, ToFb(scan.format), files_offset, partition_values, file_schema,
                        partition_schema, parse_schema, scan.columns.has_value(), columns, filter, scan.limit,
                        csv_offset, s3_offset, tasks, lance, video);
}

fb::FileFormat PlanWriter::ToFb(FileFormat format) {
  switch (format) {
    case FileFormat::kParquet:
      return fb::FileFormat::Parquet;
    case FileFormat::kCsv:
      return fb::FileFormat::Csv;
    case FileFormat::kJson:
      return fb::FileFormat::Json;
    case FileFormat::kLance:
      return fb::FileFormat::Lance;
    case FileFormat::kVideo:
      return fb::FileFormat::Video;
  }
  return fb::FileFormat::Parquet;
}

// --- Reading ---

arrow::Result<FileFormat> PlanReader::ReadFormat(fb::FileFormat format) {
  switch (format) {
    case fb::FileFormat::Parquet:
      return FileFormat::kParquet;
    case fb::FileFormat::Csv:
      return FileFormat::kCsv;
    case fb::FileFormat::Json:
      return FileFormat::kJson;
    case fb::FileFormat::Lance:
      return FileFormat::kLance;
    case fb::FileFormat::Video:
      return FileFormat::kVideo;
    default:
      return Corrupt("unknown file format " + std::to_string(static_cast<int>(format)));
  }
}

arrow::Result<ScanInfo> PlanReader::ReadScan(const fb::Scan* s) {
  if (s == nullptr) return Corrupt("a scan node without its scan");
  ScanInfo info;
  ARROW_ASSIGN_OR_RAISE(info.format, ReadFormat(s->format()));
  if (s->files()) {
    for (const auto* f : *s->files()) {
      ScanFile file;
      file.path = Str(f->path());
      file.size_bytes = f->size_bytes();
      file.fragment_id = f->fragment_id();
      file.num_rows = f->num_rows();
      info.files.push_back(std::move(file));
    }
  }
  if (s->partition_values()) {
    ARROW_ASSIGN_OR_RAISE(auto stream, ReadStreamBytes(s->partition_values(), "partition values"));
    int64_t row = 0;
    for (const auto& batch : stream.batches) {
      for (int64_t r = 0; r < batch->num_rows(); ++r, ++row) {
        if (row >= static_cast<int64_t>(info.files.size()))
          return Corrupt("more partition values than files");
        for (int c = 0; c < batch->num_columns(); ++c) {
          ARROW_ASSIGN_OR_RAISE(auto value, batch->column(c)->GetScalar(r));
          info.files[row].partition_values.push_back(std::move(value));
        }
      }
    }
    if (row != static_cast<int64_t>(info.files.size())) return Corrupt("fewer partition values than files");
  }
  ARROW_ASSIGN_OR_RAISE(info.file_schema, ReadSchemaBytes(s->file_schema(), "the scan's file schema"));
  if (s->partition_schema()) {
    ARROW_ASSIGN_OR_RAISE(info.partition_schema,
                          ReadSchemaBytes(s->partition_schema(), "the partition schema"));
    if (info.partition_schema->num_fields() > info.file_schema->num_fields()) {
      return Corrupt("more partition columns than columns");
    }
  }
  if (s->parse_schema()) {
    ARROW_ASSIGN_OR_RAISE(info.parse_schema, ReadSchemaBytes(s->parse_schema(), "the scan's parse schema"));
  }
  if (s->has_columns()) info.columns = Strings(s->columns());
  if (s->filter()) {
    ARROW_ASSIGN_OR_RAISE(info.filter, ReadExpr(s->filter()));
  }
  info.limit = s->limit();
  if (const auto* csv = s->csv()) {
    info.csv.has_header = csv->has_header();
    info.csv.delimiter = static_cast<char>(csv->delimiter());
    info.csv.quote = static_cast<char>(csv->quote());
    info.csv.quoting = csv->quoting();
    info.csv.escape = static_cast<char>(csv->escape());
    info.csv.double_quote = csv->double_quote();
    info.csv.allow_variable_columns = csv->allow_variable_columns();
  }
  info.s3 = ReadS3(s->s3());
  if (const auto* t = s->tasks()) {
    auto tasks = std::make_shared<ScanTasks>();
    if (t->tasks()) {
      for (const auto* task : *t->tasks()) {
        ScanTask out;
        out.file = task->file();
        if (out.file < 0 || static_cast<size_t>(out.file) >= info.files.size()) {
          return Corrupt("a scan task names file " + std::to_string(out.file) + " of " +
                         std::to_string(info.files.size()));
        }
        out.row_groups = Scalars(task->row_groups());
        for (int rg : out.row_groups) {
          if (rg < 0) return Corrupt("a scan task names a negative row group");
        }
        out.first_row = task->first_row();
        out.num_rows = task->num_rows();
        out.size_bytes = task->size_bytes();
        out.group = task->group();
        out.row_offset = task->row_offset();
        out.row_count = task->row_count();
        out.range_index = task->range_index();
        out.range_count = task->range_count();
        if (out.range_count < 1 || out.range_index < 0 || out.range_index >= out.range_count) {
          return Corrupt("a scan task's video range is invalid");
        }
        if (out.group < 0 || (!tasks->tasks.empty() && out.group < tasks->tasks.back().group) ||
            (tasks->tasks.empty() ? out.group != 0 : out.group > tasks->tasks.back().group + 1)) {
          return Corrupt("scan task groups are not numbered 0, 1, ... in order");
        }
        if (out.row_offset < 0 || out.row_count < -1 || (out.row_count >= 0 && out.row_groups.size() != 1)) {
          return Corrupt("a scan task's row range is invalid");
        }
        tasks->tasks.push_back(std::move(out));
      }
    }
    if (t->footers() && t->footers()->size() > 0) {
      tasks->metadata.resize(info.files.size());
      for (const auto* footer : *t->footers()) {
        const int32_t f = footer->file();
        if (f < 0 || static_cast<size_t>(f) >= info.files.size() || footer->thrift() == nullptr) {
          return Corrupt("a Parquet footer names file " + std::to_string(f) + " of " +
                         std::to_string(info.files.size()));
        }
        try {
          tasks->metadata[f] = parquet::FileMetaData::Make(footer->thrift()->data(),
                                                           static_cast<int64_t>(footer->thrift()->size()));
        } catch (const std::exception& e) {
          return Corrupt("the Parquet footer of file " + std::to_string(f) + ": " + e.what());
        }
      }
    }
    // A file without a footer here has it read when the scan opens the file.
    tasks->reason = Str(t->reason());
    tasks->files_pruned = t->files_pruned();
    tasks->row_groups_total = t->row_groups_total();
    tasks->row_groups_pruned = t->row_groups_pruned();
    tasks->limit_skipped_row_groups = t->limit_skipped_row_groups();
    info.tasks = std::move(tasks);
  }
  if (const auto* lance = s->lance()) {
    info.lance.uri = Str(lance->uri());
    info.lance.version = lance->version();
    const auto keys = Strings(lance->storage_keys());
    const auto values = Strings(lance->storage_values());
    if (keys.size() != values.size()) return Corrupt("Lance storage options without their values");
    for (size_t i = 0; i < keys.size(); ++i) info.lance.storage_options[keys[i]] = values[i];
    if (const auto* search = lance->nearest()) {
      io::LanceNearest nearest;
      nearest.column = Str(search->column());
      if (search->query()) nearest.query.assign(search->query()->begin(), search->query()->end());
      nearest.k = search->k();
      nearest.metric = Str(search->metric());
      nearest.index_name = Str(search->index_name());
      nearest.index_type = Str(search->index_type());
      nearest.nprobes = search->nprobes();
      nearest.refine_factor = search->refine_factor();
      info.lance.nearest = std::move(nearest);
    }
    const auto names = Strings(lance->index_names());
    const auto types = Strings(lance->index_types());
    const auto columns = Strings(lance->index_columns());
    const auto metrics = Strings(lance->index_metrics());
    if (types.size() != names.size() || columns.size() != names.size() || metrics.size() != names.size()) {
      return Corrupt("Lance vector indexes with missing fields");
    }
    for (size_t i = 0; i < names.size(); ++i) {
      info.lance.vector_indexes.push_back({names[i], types[i], columns[i], metrics[i]});
    }
    info.lance.nearest_note = Str(lance->nearest_note());
  }
  if (info.format == FileFormat::kVideo) {
    const auto* v = s->video();
    if (v == nullptr) return Corrupt("a video scan without its options");
    info.video.image_height = v->image_height();
    info.video.image_width = v->image_width();
    if (v->has_is_key_frame()) info.video.is_key_frame = v->is_key_frame();
    info.video.start_time = v->start_time();
    if (v->has_end_time()) info.video.end_time = v->end_time();
    if (v->has_sample_interval()) info.video.sample_interval_seconds = v->sample_interval_seconds();
  }
  // Footers read on this side are read once per file and shared by the scan's tasks.
  if (info.format == FileFormat::kParquet)
    info.footers = std::make_shared<io::ParquetFooters>(info.files.size());
  return info;
}

}  // namespace ketch::serde::internal
