#include "ketch/distributed/serde/plan_serde.h"

#include <arrow/io/memory.h>
#include <arrow/ipc/api.h>
#include <flatbuffers/flatbuffers.h>
#include <parquet/metadata.h>

#include <cstring>
#include <unordered_map>

#include "ketch/distributed/serde/plan_generated.h"
#include "ketch/io/formats/parquet_footers.h"

namespace ketch::serde {
namespace {

using flatbuffers::Offset;
using flatbuffers::Vector;

constexpr char kMagic[4] = {'K', 'T', 'P', 'L'};
constexpr size_t kHeaderSize = 8;
// FlatBuffers address at most 2 GiB; keep a margin for the tables around the embedded bytes.
constexpr int64_t kMaxPlanBytes = (int64_t{1} << 31) - (int64_t{64} << 20);
// Expression trees nest one table level per expression (plus a few for their fields).
constexpr flatbuffers::uoffset_t kMaxDepth = 4096;
constexpr flatbuffers::uoffset_t kMaxTables = 1u << 30;

// --- Arrow values as IPC bytes -------------------------------------------------------------------

arrow::Result<std::shared_ptr<arrow::Buffer>> SchemaBytes(const arrow::Schema& schema) {
  return arrow::ipc::SerializeSchema(schema);
}

arrow::Result<std::shared_ptr<arrow::Buffer>> TypeBytes(const std::shared_ptr<arrow::DataType>& type) {
  if (!type) return arrow::Status::Invalid("plan serialization: expression without a type");
  return SchemaBytes(*arrow::schema({arrow::field("type", type)}));
}

arrow::Result<std::shared_ptr<arrow::Buffer>> StreamBytes(
    const std::shared_ptr<arrow::Schema>& schema,
    const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches) {
  ARROW_ASSIGN_OR_RAISE(auto sink, arrow::io::BufferOutputStream::Create());
  ARROW_ASSIGN_OR_RAISE(auto writer, arrow::ipc::MakeStreamWriter(sink, schema));
  for (const auto& batch : batches) {
    if (batch->schema()->Equals(*schema, /*check_metadata=*/false)) {
      ARROW_RETURN_NOT_OK(writer->WriteRecordBatch(*batch));
    } else {
      // Same columns under the node's schema (field metadata or names may differ).
      ARROW_RETURN_NOT_OK(
          writer->WriteRecordBatch(*arrow::RecordBatch::Make(schema, batch->num_rows(), batch->columns())));
    }
  }
  ARROW_RETURN_NOT_OK(writer->Close());
  return sink->Finish();
}

arrow::Result<std::shared_ptr<arrow::Buffer>> ScalarBytes(const std::shared_ptr<arrow::Scalar>& scalar) {
  ARROW_ASSIGN_OR_RAISE(auto array, arrow::MakeArrayFromScalar(*scalar, 1));
  auto schema = arrow::schema({arrow::field("value", scalar->type)});
  return StreamBytes(schema, {arrow::RecordBatch::Make(schema, 1, {array})});
}

// An owned, aligned copy of an embedded byte vector (the IPC readers return arrays that point into
// the buffer they read, which must outlive the plan; the caller's bytes need not).
arrow::Result<std::shared_ptr<arrow::Buffer>> Owned(const Vector<uint8_t>* bytes) {
  ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> out, arrow::AllocateBuffer(bytes->size()));
  if (bytes->size() > 0) std::memcpy(out->mutable_data(), bytes->data(), bytes->size());
  return out;
}

// A Parquet footer as the thrift bytes a file stores.
arrow::Result<std::shared_ptr<arrow::Buffer>> FooterBytes(const parquet::FileMetaData& metadata) {
  ARROW_ASSIGN_OR_RAISE(auto sink, arrow::io::BufferOutputStream::Create());
  try {
    metadata.WriteTo(sink.get());
  } catch (const std::exception& e) {
    return arrow::Status::IOError("plan serialization: cannot write a Parquet footer: ", e.what());
  }
  return sink->Finish();
}

arrow::Status Corrupt(const std::string& what) {
  return arrow::Status::Invalid("corrupt plan bytes: ", what);
}

arrow::Result<std::shared_ptr<arrow::Schema>> ReadSchemaBytes(const Vector<uint8_t>* bytes,
                                                              const char* what) {
  if (bytes == nullptr) return Corrupt(std::string(what) + " is missing");
  ARROW_ASSIGN_OR_RAISE(auto buffer, Owned(bytes));
  arrow::io::BufferReader reader(buffer);
  arrow::ipc::DictionaryMemo memo;
  auto schema = arrow::ipc::ReadSchema(&reader, &memo);
  if (!schema.ok()) return Corrupt(std::string(what) + ": " + schema.status().message());
  return schema;
}

arrow::Result<std::shared_ptr<arrow::DataType>> ReadType(const Vector<uint8_t>* bytes) {
  ARROW_ASSIGN_OR_RAISE(auto schema, ReadSchemaBytes(bytes, "expression type"));
  if (schema->num_fields() != 1) return Corrupt("an expression type is not one field");
  return schema->field(0)->type();
}

struct Stream {
  std::shared_ptr<arrow::Schema> schema;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
};

arrow::Result<Stream> ReadStreamBytes(const Vector<uint8_t>* bytes, const char* what) {
  if (bytes == nullptr) return Corrupt(std::string(what) + " is missing");
  ARROW_ASSIGN_OR_RAISE(auto buffer, Owned(bytes));
  auto read = [&]() -> arrow::Result<Stream> {
    ARROW_ASSIGN_OR_RAISE(auto reader, arrow::ipc::RecordBatchStreamReader::Open(
                                           std::make_shared<arrow::io::BufferReader>(buffer)));
    Stream out;
    out.schema = reader->schema();
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      ARROW_RETURN_NOT_OK(reader->ReadNext(&batch));
      if (!batch) break;
      ARROW_RETURN_NOT_OK(batch->ValidateFull());  // corrupt offsets must fail here, not in a kernel
      out.batches.push_back(std::move(batch));
    }
    return out;
  };
  auto stream = read();
  if (!stream.ok()) return Corrupt(std::string(what) + ": " + stream.status().message());
  return stream;
}

arrow::Result<std::shared_ptr<arrow::Scalar>> ReadScalar(const Vector<uint8_t>* bytes) {
  ARROW_ASSIGN_OR_RAISE(auto stream, ReadStreamBytes(bytes, "a literal"));
  if (stream.batches.size() != 1 || stream.batches[0]->num_columns() != 1 ||
      stream.batches[0]->num_rows() != 1) {
    return Corrupt("a literal is not one value");
  }
  return stream.batches[0]->column(0)->GetScalar(0);
}

std::string Str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

std::vector<std::string> Strings(const Vector<Offset<flatbuffers::String>>* v) {
  std::vector<std::string> out;
  if (v) {
    for (const auto* s : *v) out.push_back(Str(s));
  }
  return out;
}

template <typename T>
std::vector<T> Scalars(const Vector<T>* v) {
  return v ? std::vector<T>(v->begin(), v->end()) : std::vector<T>{};
}

// --- Writing -------------------------------------------------------------------------------------

class PlanWriter {
 public:
  explicit PlanWriter(const UdfPayloadWriter& write_udf) : write_udf_(write_udf) {}

  arrow::Result<std::shared_ptr<arrow::Buffer>> Write(const LogicalPlanPtr& plan) {
    if (!plan) return arrow::Status::Invalid("SerializePlan: no plan");
    ARROW_ASSIGN_OR_RAISE(uint32_t root, WriteNode(plan));
    auto nodes = fbb_.CreateVector(nodes_);
    fbb_.Finish(fb::CreatePlanFragment(fbb_, nodes, root));
    const size_t size = fbb_.GetSize();
    ARROW_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> out, arrow::AllocateBuffer(kHeaderSize + size));
    uint8_t* data = out->mutable_data();
    std::memcpy(data, kMagic, 4);
    const uint32_t version = kPlanFormatVersion;
    for (int i = 0; i < 4; ++i) data[4 + i] = static_cast<uint8_t>(version >> (8 * i));
    std::memcpy(data + kHeaderSize, fbb_.GetBufferPointer(), size);
    return out;
  }

 private:
  // Embedded bytes: counted against the format's size limit before they are copied in.
  arrow::Result<Offset<Vector<uint8_t>>> Bytes(const arrow::Buffer& buffer) {
    embedded_bytes_ += buffer.size();
    if (embedded_bytes_ > kMaxPlanBytes) {
      return arrow::Status::CapacityError("plan serialization: the plan holds more than ", kMaxPlanBytes,
                                          " bytes of embedded data (in-memory sources, literals), over the "
                                          "format's 2 GiB limit; write the data to files and read those");
    }
    return fbb_.CreateVector(buffer.data(), static_cast<size_t>(buffer.size()));
  }
  arrow::Result<Offset<Vector<uint8_t>>> Bytes(const std::string& bytes) {
    return Bytes(
        arrow::Buffer(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int64_t>(bytes.size())));
  }

  Offset<Vector<Offset<flatbuffers::String>>> StringList(const std::vector<std::string>& v) {
    return fbb_.CreateVectorOfStrings(v);
  }

  arrow::Result<Offset<fb::Expr>> WriteExpr(const ExprPtr& expr) {
    if (!expr) return arrow::Status::Invalid("plan serialization: missing expression");
    std::vector<Offset<fb::Expr>> children;
    for (const auto& child : expr->children()) {
      ARROW_ASSIGN_OR_RAISE(auto c, WriteExpr(child));
      children.push_back(c);
    }
    auto name = fbb_.CreateString(expr->name());
    auto kids = fbb_.CreateVector(children);
    Offset<Vector<uint8_t>> literal, type;
    Offset<Vector<Offset<fb::NamedScalar>>> options;
    Offset<fb::Udf> udf;
    fb::ExprKind kind = fb::ExprKind::Column;
    switch (expr->kind()) {
      case ExprKind::kColumn:
        kind = fb::ExprKind::Column;
        break;
      case ExprKind::kLiteral: {
        kind = fb::ExprKind::Literal;
        if (!expr->literal()) return arrow::Status::Invalid("plan serialization: literal without a value");
        ARROW_ASSIGN_OR_RAISE(auto bytes, ScalarBytes(expr->literal()));
        ARROW_ASSIGN_OR_RAISE(literal, Bytes(*bytes));
        break;
      }
      case ExprKind::kAlias:
        kind = fb::ExprKind::Alias;
        break;
      case ExprKind::kCast: {
        kind = fb::ExprKind::Cast;
        ARROW_ASSIGN_OR_RAISE(auto bytes, TypeBytes(expr->type()));
        ARROW_ASSIGN_OR_RAISE(type, Bytes(*bytes));
        break;
      }
      case ExprKind::kCall: {
        kind = fb::ExprKind::Call;
        std::vector<Offset<fb::NamedScalar>> entries;
        for (const auto& [key, value] : expr->options()) {
          auto k = fbb_.CreateString(key);
          Offset<Vector<uint8_t>> v;
          if (value) {
            ARROW_ASSIGN_OR_RAISE(auto bytes, ScalarBytes(value));
            ARROW_ASSIGN_OR_RAISE(v, Bytes(*bytes));
          }
          entries.push_back(fb::CreateNamedScalar(fbb_, k, v));
        }
        options = fbb_.CreateVector(entries);
        break;
      }
      case ExprKind::kUdf: {
        kind = fb::ExprKind::Udf;
        const std::string udf_name = expr->udf() ? expr->udf()->name() : expr->name();
        if (!write_udf_) {
          return arrow::Status::Invalid("plan serialization: the plan calls UDF '", udf_name,
                                        "' but no UDF payload writer was given");
        }
        auto payload = write_udf_(*expr);
        if (!payload.ok()) {
          return payload.status().WithMessage("cannot serialize UDF '", udf_name,
                                              "': ", payload.status().message());
        }
        ARROW_ASSIGN_OR_RAISE(auto payload_bytes, Bytes(*payload));
        ARROW_ASSIGN_OR_RAISE(auto type_bytes, TypeBytes(expr->type()));
        ARROW_ASSIGN_OR_RAISE(type, Bytes(*type_bytes));
        const auto& props = expr->udf_properties();
        std::vector<Offset<fb::StringPair>> display;
        for (const auto& [key, value] : props.display) {
          auto k = fbb_.CreateString(key);
          auto v = fbb_.CreateString(value);
          display.push_back(fb::CreateStringPair(fbb_, k, v));
        }
        auto display_offset = fbb_.CreateVector(display);
        auto name_offset = fbb_.CreateString(udf_name);
        udf = fb::CreateUdf(fbb_, name_offset, payload_bytes, props.batch_size, props.default_batch_rows,
                            props.concurrency, props.is_class, props.generator, props.max_items_per_row,
                            display_offset, props.bucket_key_args);
        break;
      }
    }
    fb::ExprBuilder b(fbb_);
    b.add_kind(kind);
    b.add_name(name);
    b.add_children(kids);
    if (!literal.IsNull()) b.add_literal(literal);
    if (!type.IsNull()) b.add_type(type);
    if (!options.IsNull()) b.add_options(options);
    if (!udf.IsNull()) b.add_udf(udf);
    return b.Finish();
  }

  arrow::Result<Offset<Vector<Offset<fb::Expr>>>> WriteExprs(const std::vector<ExprPtr>& exprs) {
    std::vector<Offset<fb::Expr>> out;
    for (const auto& e : exprs) {
      ARROW_ASSIGN_OR_RAISE(auto o, WriteExpr(e));
      out.push_back(o);
    }
    return fbb_.CreateVector(out);
  }

  arrow::Result<Offset<fb::Scan>> WriteScan(const ScanInfo& scan) {
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
                          partition_schema, parse_schema, scan.columns.has_value(), columns, filter,
                          scan.limit, csv_offset, s3_offset, tasks, lance, video);
  }

  static fb::FileFormat ToFb(FileFormat format) {
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

  Offset<fb::S3Config> WriteS3(const io::S3Config& s3) {
    return fb::CreateS3ConfigDirect(fbb_, s3.region.c_str(), s3.endpoint_override.c_str(), s3.scheme.c_str(),
                                    s3.key_id.c_str(), s3.access_key.c_str(), s3.session_token.c_str(),
                                    s3.anonymous);
  }

  arrow::Result<uint32_t> WriteNode(const LogicalPlanPtr& plan) {
    auto seen = index_.find(plan.get());
    if (seen != index_.end()) return seen->second;
    std::vector<uint32_t> inputs;
    for (const auto& input : plan->inputs()) {
      ARROW_ASSIGN_OR_RAISE(auto i, WriteNode(input));
      inputs.push_back(i);
    }
    auto inputs_offset = fbb_.CreateVector(inputs);
    Offset<Vector<uint8_t>> schema, batches, aggregate_source_schema;
    fb::AggregatePhase aggregate_phase = fb::AggregatePhase::Full;
    Offset<Vector<int64_t>> batch_partitions;
    Offset<fb::Scan> scan;
    Offset<Vector<Offset<fb::Expr>>> exprs;
    Offset<fb::Expr> predicate;
    Offset<flatbuffers::String> root_dir, compression, prefix, suffix, strategy, id_column;
    Offset<Vector<uint8_t>> descending, nulls_first;
    Offset<Vector<Offset<flatbuffers::String>>> group_by, left_on, right_on, explode_columns, partition_by,
        write_partition_cols;
    Offset<fb::S3Config> write_s3;
    fb::JoinType how = fb::JoinType::Inner;
    fb::PlanKind kind = fb::PlanKind::InMemorySource;
    switch (plan->kind()) {
      case LogicalKind::kInMemorySource: {
        kind = fb::PlanKind::InMemorySource;
        ARROW_ASSIGN_OR_RAISE(auto schema_bytes, SchemaBytes(*plan->schema()));
        ARROW_ASSIGN_OR_RAISE(schema, Bytes(*schema_bytes));
        ARROW_ASSIGN_OR_RAISE(auto stream, StreamBytes(plan->schema(), plan->batches()));
        ARROW_ASSIGN_OR_RAISE(batches, Bytes(*stream));
        batch_partitions = fbb_.CreateVector(plan->batch_partitions());
        break;
      }
      case LogicalKind::kScan: {
        kind = fb::PlanKind::Scan;
        ARROW_ASSIGN_OR_RAISE(scan, WriteScan(plan->scan()));
        break;
      }
      case LogicalKind::kProject: {
        kind = fb::PlanKind::Project;
        ARROW_ASSIGN_OR_RAISE(exprs, WriteExprs(plan->exprs()));
        break;
      }
      case LogicalKind::kFilter: {
        kind = fb::PlanKind::Filter;
        ARROW_ASSIGN_OR_RAISE(predicate, WriteExpr(plan->predicate()));
        break;
      }
      case LogicalKind::kLimit:
        kind = fb::PlanKind::Limit;
        break;
      case LogicalKind::kWrite:
        kind = fb::PlanKind::WriteParquet;
        root_dir = fbb_.CreateString(plan->write().root_dir);
        compression = fbb_.CreateString(plan->write().compression);
        write_partition_cols = StringList(plan->write().partition_cols);
        write_s3 = WriteS3(plan->write().s3);
        break;
      case LogicalKind::kSort: {
        kind = fb::PlanKind::Sort;
        const auto& sort = plan->sort();
        ARROW_ASSIGN_OR_RAISE(exprs, WriteExprs(sort.keys));
        std::vector<uint8_t> desc(sort.descending.begin(), sort.descending.end());
        std::vector<uint8_t> nf(sort.nulls_first.begin(), sort.nulls_first.end());
        descending = fbb_.CreateVector(desc);
        nulls_first = fbb_.CreateVector(nf);
        break;
      }
      case LogicalKind::kAggregate: {
        kind = fb::PlanKind::Aggregate;
        ARROW_ASSIGN_OR_RAISE(exprs, WriteExprs(plan->aggregate().aggregations));
        group_by = StringList(plan->aggregate().group_by);
        switch (plan->aggregate().phase) {
          case AggregatePhase::kFull:
            aggregate_phase = fb::AggregatePhase::Full;
            break;
          case AggregatePhase::kPartial:
            aggregate_phase = fb::AggregatePhase::Partial;
            break;
          case AggregatePhase::kFinal:
            aggregate_phase = fb::AggregatePhase::Final;
            break;
        }
        if (plan->aggregate().source_schema) {
          ARROW_ASSIGN_OR_RAISE(auto source_bytes, SchemaBytes(*plan->aggregate().source_schema));
          ARROW_ASSIGN_OR_RAISE(aggregate_source_schema, Bytes(*source_bytes));
        }
        break;
      }
      case LogicalKind::kJoin: {
        kind = fb::PlanKind::Join;
        const auto& join = plan->join();
        left_on = StringList(join.left_on);
        right_on = StringList(join.right_on);
        prefix = fbb_.CreateString(join.prefix);
        suffix = fbb_.CreateString(join.suffix);
        if (!join.strategy.empty()) strategy = fbb_.CreateString(join.strategy);
        switch (join.how) {
          case JoinType::kInner:
            how = fb::JoinType::Inner;
            break;
          case JoinType::kLeft:
            how = fb::JoinType::Left;
            break;
          case JoinType::kRight:
            how = fb::JoinType::Right;
            break;
          case JoinType::kOuter:
            how = fb::JoinType::Outer;
            break;
          case JoinType::kSemi:
            how = fb::JoinType::Semi;
            break;
          case JoinType::kAnti:
            how = fb::JoinType::Anti;
            break;
          case JoinType::kCross:
            how = fb::JoinType::Cross;
            break;
        }
        break;
      }
      case LogicalKind::kExplode:
        kind = fb::PlanKind::Explode;
        explode_columns = StringList(plan->explode_columns());
        break;
      case LogicalKind::kConcat:
        kind = fb::PlanKind::Concat;
        break;
      case LogicalKind::kSample:
        kind = fb::PlanKind::Sample;
        break;
      case LogicalKind::kRepartition:
        kind = fb::PlanKind::Repartition;
        partition_by = StringList(plan->partitioning().by);
        break;
      case LogicalKind::kIntoPartitions:
        kind = fb::PlanKind::IntoPartitions;
        break;
      case LogicalKind::kIntoBatches:
        kind = fb::PlanKind::IntoBatches;
        break;
      case LogicalKind::kMonotonicId:
        kind = fb::PlanKind::MonotonicId;
        id_column = fbb_.CreateString(plan->id_column());
        break;
      case LogicalKind::kWindow:
        // The window calls carry their window (keys, frame) in their options.
        kind = fb::PlanKind::Window;
        ARROW_ASSIGN_OR_RAISE(exprs, WriteExprs(plan->exprs()));
        break;
    }
    fb::PlanNodeBuilder b(fbb_);
    b.add_kind(kind);
    b.add_inputs(inputs_offset);
    if (!schema.IsNull()) b.add_schema(schema);
    if (!batches.IsNull()) b.add_batches(batches);
    if (!batch_partitions.IsNull()) b.add_batch_partitions(batch_partitions);
    if (plan->kind() == LogicalKind::kInMemorySource) b.add_first_row(plan->first_row());
    if (!scan.IsNull()) b.add_scan(scan);
    if (!exprs.IsNull()) b.add_exprs(exprs);
    if (!predicate.IsNull()) b.add_predicate(predicate);
    b.add_limit(plan->limit());
    b.add_limit_offset(plan->offset());
    if (!root_dir.IsNull()) b.add_write_root_dir(root_dir);
    if (!compression.IsNull()) b.add_write_compression(compression);
    if (!descending.IsNull()) b.add_sort_descending(descending);
    if (!nulls_first.IsNull()) b.add_sort_nulls_first(nulls_first);
    if (!group_by.IsNull()) b.add_group_by(group_by);
    if (!left_on.IsNull()) b.add_join_left_on(left_on);
    if (!right_on.IsNull()) b.add_join_right_on(right_on);
    b.add_join_how(how);
    if (!prefix.IsNull()) b.add_join_prefix(prefix);
    if (!suffix.IsNull()) b.add_join_suffix(suffix);
    if (!strategy.IsNull()) b.add_join_strategy(strategy);
    if (!explode_columns.IsNull()) b.add_explode_columns(explode_columns);
    if (!id_column.IsNull()) b.add_id_column(id_column);
    b.add_sample_fraction(plan->sample().fraction);
    b.add_sample_with_replacement(plan->sample().with_replacement);
    b.add_sample_seed(plan->sample().seed);
    b.add_sample_size(plan->sample().size);
    b.add_num_partitions(plan->partitioning().num_partitions);
    if (!partition_by.IsNull()) b.add_partition_by(partition_by);
    b.add_batch_size(plan->partitioning().batch_size);
    b.add_aggregate_phase(aggregate_phase);
    if (!aggregate_source_schema.IsNull()) b.add_aggregate_source_schema(aggregate_source_schema);
    if (plan->kind() == LogicalKind::kWrite) b.add_write_format(ToFb(plan->write().format));
    if (!write_partition_cols.IsNull()) b.add_write_partition_cols(write_partition_cols);
    if (!write_s3.IsNull()) b.add_write_s3(write_s3);
    nodes_.push_back(b.Finish());
    const auto index = static_cast<uint32_t>(nodes_.size() - 1);
    index_[plan.get()] = index;
    return index;
  }

  const UdfPayloadWriter& write_udf_;
  flatbuffers::FlatBufferBuilder fbb_{1 << 16};
  std::vector<Offset<fb::PlanNode>> nodes_;
  std::unordered_map<const LogicalPlan*, uint32_t> index_;
  int64_t embedded_bytes_ = 0;
};

// --- Reading -------------------------------------------------------------------------------------

class PlanReader {
 public:
  explicit PlanReader(const UdfPayloadReader& read_udf) : read_udf_(read_udf) {}

  arrow::Result<LogicalPlanPtr> Read(const fb::PlanFragment& fragment) {
    const auto* nodes = fragment.nodes();
    if (nodes == nullptr || nodes->size() == 0) return Corrupt("no plan nodes");
    if (fragment.root() >= nodes->size()) return Corrupt("the root node index is out of range");
    for (flatbuffers::uoffset_t i = 0; i < nodes->size(); ++i) {
      ARROW_ASSIGN_OR_RAISE(auto node, ReadNode(*nodes->Get(i), i));
      plans_.push_back(std::move(node));
    }
    return plans_[fragment.root()];
  }

 private:
  arrow::Result<ExprPtr> ReadExpr(const fb::Expr* e) {
    if (e == nullptr) return Corrupt("an expression is missing");
    std::vector<ExprPtr> children;
    if (e->children()) {
      for (const auto* c : *e->children()) {
        ARROW_ASSIGN_OR_RAISE(auto child, ReadExpr(c));
        children.push_back(std::move(child));
      }
    }
    const std::string name = Str(e->name());
    auto arity = [&](size_t n) -> arrow::Status {
      if (children.size() != n) {
        return Corrupt("expression '" + name + "' has " + std::to_string(children.size()) +
                       " inputs, expected " + std::to_string(n));
      }
      return arrow::Status::OK();
    };
    switch (e->kind()) {
      case fb::ExprKind::Column:
        ARROW_RETURN_NOT_OK(arity(0));
        return Expr::Column(name);
      case fb::ExprKind::Literal: {
        ARROW_RETURN_NOT_OK(arity(0));
        ARROW_ASSIGN_OR_RAISE(auto value, ReadScalar(e->literal()));
        return Expr::Literal(std::move(value));
      }
      case fb::ExprKind::Alias:
        ARROW_RETURN_NOT_OK(arity(1));
        return Expr::Alias(children[0], name);
      case fb::ExprKind::Cast: {
        ARROW_RETURN_NOT_OK(arity(1));
        ARROW_ASSIGN_OR_RAISE(auto type, ReadType(e->type()));
        return Expr::Cast(children[0], std::move(type));
      }
      case fb::ExprKind::Call: {
        FunctionOptions options;
        if (e->options()) {
          for (const auto* entry : *e->options()) {
            std::shared_ptr<arrow::Scalar> value;
            if (entry->value()) {
              ARROW_ASSIGN_OR_RAISE(value, ReadScalar(entry->value()));
            }
            options[Str(entry->key())] = std::move(value);
          }
        }
        return Expr::Call(name, std::move(children), std::move(options));
      }
      case fb::ExprKind::Udf: {
        const auto* udf = e->udf();
        if (udf == nullptr) return Corrupt("a UDF expression without its UDF");
        ARROW_ASSIGN_OR_RAISE(auto type, ReadType(e->type()));
        UdfProperties props;
        props.batch_size = udf->batch_size();
        props.default_batch_rows = udf->default_batch_rows();
        props.concurrency = udf->concurrency();
        props.is_class = udf->is_class();
        props.generator = udf->generator();
        props.max_items_per_row = udf->max_items_per_row();
        props.bucket_key_args = udf->bucket_key_args();
        if (udf->display()) {
          for (const auto* pair : *udf->display()) props.display[Str(pair->key())] = Str(pair->value());
        }
        const std::string udf_name = Str(udf->name());
        if (!read_udf_) {
          return arrow::Status::Invalid("plan deserialization: the plan calls UDF '", udf_name,
                                        "' but no UDF payload reader was given");
        }
        std::string payload;
        if (udf->payload())
          payload.assign(reinterpret_cast<const char*>(udf->payload()->data()), udf->payload()->size());
        auto runner = read_udf_(udf_name, payload, props);
        if (!runner.ok()) {
          return runner.status().WithMessage("cannot deserialize UDF '", udf_name,
                                             "': ", runner.status().message());
        }
        if (!*runner)
          return arrow::Status::Invalid("cannot deserialize UDF '", udf_name, "': no implementation");
        return Expr::Udf(*runner, std::move(children), std::move(type), std::move(props));
      }
    }
    return Corrupt("unknown expression kind " + std::to_string(static_cast<int>(e->kind())));
  }

  arrow::Result<std::vector<ExprPtr>> ReadExprs(const Vector<Offset<fb::Expr>>* v) {
    std::vector<ExprPtr> out;
    if (v) {
      for (const auto* e : *v) {
        ARROW_ASSIGN_OR_RAISE(auto expr, ReadExpr(e));
        out.push_back(std::move(expr));
      }
    }
    return out;
  }

  arrow::Result<FileFormat> ReadFormat(fb::FileFormat format) {
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

  static io::S3Config ReadS3(const fb::S3Config* s3) {
    io::S3Config out;
    if (s3 == nullptr) return out;
    out.region = Str(s3->region());
    out.endpoint_override = Str(s3->endpoint_override());
    out.scheme = Str(s3->scheme());
    out.key_id = Str(s3->key_id());
    out.access_key = Str(s3->access_key());
    out.session_token = Str(s3->session_token());
    out.anonymous = s3->anonymous();
    return out;
  }

  arrow::Result<ScanInfo> ReadScan(const fb::Scan* s) {
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
          if (out.row_offset < 0 || out.row_count < -1 ||
              (out.row_count >= 0 && out.row_groups.size() != 1)) {
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

  arrow::Result<LogicalPlanPtr> ReadNode(const fb::PlanNode& n, flatbuffers::uoffset_t self) {
    std::vector<LogicalPlanPtr> inputs;
    if (n.inputs()) {
      for (uint32_t i : *n.inputs()) {
        if (i >= self) return Corrupt("a plan node's input is not an earlier node");
        inputs.push_back(plans_[i]);
      }
    }
    auto expect_inputs = [&](size_t count) -> arrow::Status {
      if (inputs.size() != count) {
        return Corrupt("a " + std::string(fb::EnumNamePlanKind(n.kind())) + " node has " +
                       std::to_string(inputs.size()) + " inputs, expected " + std::to_string(count));
      }
      return arrow::Status::OK();
    };
    switch (n.kind()) {
      case fb::PlanKind::InMemorySource: {
        ARROW_RETURN_NOT_OK(expect_inputs(0));
        ARROW_ASSIGN_OR_RAISE(auto schema, ReadSchemaBytes(n.schema(), "an in-memory source's schema"));
        ARROW_ASSIGN_OR_RAISE(auto stream, ReadStreamBytes(n.batches(), "an in-memory source's data"));
        if (!stream.schema->Equals(*schema, /*check_metadata=*/false)) {
          return Corrupt("an in-memory source's data does not match its schema");
        }
        std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
        for (auto& batch : stream.batches) {
          batches.push_back(arrow::RecordBatch::Make(schema, batch->num_rows(), batch->columns()));
        }
        return LogicalPlan::InMemory(schema, std::move(batches), Scalars(n.batch_partitions()),
                                     n.first_row());
      }
      case fb::PlanKind::Scan: {
        ARROW_RETURN_NOT_OK(expect_inputs(0));
        ARROW_ASSIGN_OR_RAISE(auto info, ReadScan(n.scan()));
        return LogicalPlan::Scan(std::move(info));
      }
      case fb::PlanKind::Project: {
        ARROW_RETURN_NOT_OK(expect_inputs(1));
        ARROW_ASSIGN_OR_RAISE(auto exprs, ReadExprs(n.exprs()));
        return LogicalPlan::Project(inputs[0], std::move(exprs));
      }
      case fb::PlanKind::Filter: {
        ARROW_RETURN_NOT_OK(expect_inputs(1));
        ARROW_ASSIGN_OR_RAISE(auto predicate, ReadExpr(n.predicate()));
        return LogicalPlan::Filter(inputs[0], std::move(predicate));
      }
      case fb::PlanKind::Limit:
        ARROW_RETURN_NOT_OK(expect_inputs(1));
        return LogicalPlan::Limit(inputs[0], n.limit(), n.limit_offset());
      case fb::PlanKind::WriteParquet:
        ARROW_RETURN_NOT_OK(expect_inputs(1));
        {
          WriteInfo info;
          info.root_dir = Str(n.write_root_dir());
          info.compression = Str(n.write_compression());
          ARROW_ASSIGN_OR_RAISE(info.format, ReadFormat(n.write_format()));
          if (const auto* cols = n.write_partition_cols()) {
            for (const auto* c : *cols) info.partition_cols.push_back(c->str());
          }
          info.s3 = ReadS3(n.write_s3());
          return LogicalPlan::Write(inputs[0], std::move(info));
        }
      case fb::PlanKind::Sort: {
        ARROW_RETURN_NOT_OK(expect_inputs(1));
        SortSpec spec;
        ARROW_ASSIGN_OR_RAISE(spec.keys, ReadExprs(n.exprs()));
        for (uint8_t d : Scalars(n.sort_descending())) spec.descending.push_back(d != 0);
        for (uint8_t f : Scalars(n.sort_nulls_first())) spec.nulls_first.push_back(f != 0);
        return LogicalPlan::Sort(inputs[0], std::move(spec));
      }
      case fb::PlanKind::Aggregate: {
        ARROW_RETURN_NOT_OK(expect_inputs(1));
        AggregateSpec spec;
        spec.group_by = Strings(n.group_by());
        ARROW_ASSIGN_OR_RAISE(spec.aggregations, ReadExprs(n.exprs()));
        switch (n.aggregate_phase()) {
          case fb::AggregatePhase::Full:
            spec.phase = AggregatePhase::kFull;
            break;
          case fb::AggregatePhase::Partial:
            spec.phase = AggregatePhase::kPartial;
            break;
          case fb::AggregatePhase::Final:
            spec.phase = AggregatePhase::kFinal;
            break;
          default:
            return arrow::Status::Invalid("plan bytes: unknown aggregate phase ",
                                          static_cast<int>(n.aggregate_phase()));
        }
        if (n.aggregate_source_schema()) {
          ARROW_ASSIGN_OR_RAISE(spec.source_schema, ReadSchemaBytes(n.aggregate_source_schema(),
                                                                    "a final aggregate's source schema"));
        }
        return LogicalPlan::Aggregate(inputs[0], std::move(spec));
      }
      case fb::PlanKind::Join: {
        ARROW_RETURN_NOT_OK(expect_inputs(2));
        JoinSpec spec;
        spec.left_on = Strings(n.join_left_on());
        spec.right_on = Strings(n.join_right_on());
        switch (n.join_how()) {
          case fb::JoinType::Inner:
            spec.how = JoinType::kInner;
            break;
          case fb::JoinType::Left:
            spec.how = JoinType::kLeft;
            break;
          case fb::JoinType::Right:
            spec.how = JoinType::kRight;
            break;
          case fb::JoinType::Outer:
            spec.how = JoinType::kOuter;
            break;
          case fb::JoinType::Semi:
            spec.how = JoinType::kSemi;
            break;
          case fb::JoinType::Anti:
            spec.how = JoinType::kAnti;
            break;
          case fb::JoinType::Cross:
            spec.how = JoinType::kCross;
            break;
          default:
            return Corrupt("unknown join type " + std::to_string(static_cast<int>(n.join_how())));
        }
        spec.prefix = Str(n.join_prefix());
        spec.suffix = Str(n.join_suffix());
        spec.strategy = Str(n.join_strategy());
        return LogicalPlan::Join(inputs[0], inputs[1], std::move(spec));
      }
      case fb::PlanKind::Explode:
        ARROW_RETURN_NOT_OK(expect_inputs(1));
        return LogicalPlan::Explode(inputs[0], Strings(n.explode_columns()));
      case fb::PlanKind::Concat:
        ARROW_RETURN_NOT_OK(expect_inputs(2));
        return LogicalPlan::Concat(inputs[0], inputs[1]);
      case fb::PlanKind::Sample:
        ARROW_RETURN_NOT_OK(expect_inputs(1));
        return LogicalPlan::Sample(inputs[0], SampleSpec{n.sample_fraction(), n.sample_with_replacement(),
                                                         n.sample_seed(), n.sample_size()});
      case fb::PlanKind::Repartition:
        ARROW_RETURN_NOT_OK(expect_inputs(1));
        return LogicalPlan::Repartition(
            inputs[0], PartitionSpec{n.num_partitions(), Strings(n.partition_by()), n.batch_size()});
      case fb::PlanKind::IntoPartitions:
        ARROW_RETURN_NOT_OK(expect_inputs(1));
        return LogicalPlan::IntoPartitions(inputs[0], n.num_partitions());
      case fb::PlanKind::IntoBatches:
        ARROW_RETURN_NOT_OK(expect_inputs(1));
        return LogicalPlan::IntoBatches(inputs[0], n.batch_size());
      case fb::PlanKind::MonotonicId:
        ARROW_RETURN_NOT_OK(expect_inputs(1));
        if (n.id_column() == nullptr) return Corrupt("MonotonicId node without its column");
        return LogicalPlan::MonotonicId(inputs[0], n.id_column()->str());
      case fb::PlanKind::Window: {
        ARROW_RETURN_NOT_OK(expect_inputs(1));
        ARROW_ASSIGN_OR_RAISE(auto window_exprs, ReadExprs(n.exprs()));
        return LogicalPlan::Window(inputs[0], std::move(window_exprs));
      }
    }
    return Corrupt("unknown plan node kind " + std::to_string(static_cast<int>(n.kind())));
  }

  const UdfPayloadReader& read_udf_;
  std::vector<LogicalPlanPtr> plans_;
};

}  // namespace

arrow::Result<std::shared_ptr<arrow::Buffer>> SerializePlan(const LogicalPlanPtr& plan,
                                                            const UdfPayloadWriter& write_udf) {
  return PlanWriter(write_udf).Write(plan);
}

arrow::Result<LogicalPlanPtr> DeserializePlan(const arrow::Buffer& bytes, const UdfPayloadReader& read_udf) {
  const uint8_t* data = bytes.data();
  const int64_t size = bytes.size();
  if (size < static_cast<int64_t>(kHeaderSize) || std::memcmp(data, kMagic, 4) != 0) {
    return arrow::Status::Invalid("not a serialized Ketch plan (", size,
                                  " bytes without the \"KTPL\" header of plan bytes)");
  }
  uint32_t version = 0;
  for (int i = 0; i < 4; ++i) version |= static_cast<uint32_t>(data[4 + i]) << (8 * i);
  if (version != kPlanFormatVersion) {
    return arrow::Status::Invalid("plan bytes are in format version ", version,
                                  " but this build of Ketch reads version ", kPlanFormatVersion,
                                  ": the sending and receiving processes must run the same Ketch");
  }
  const int64_t body = size - static_cast<int64_t>(kHeaderSize);
  if (body >= static_cast<int64_t>(FLATBUFFERS_MAX_BUFFER_SIZE)) {
    return arrow::Status::Invalid("corrupt plan bytes: ", size, " bytes is over the format's 2 GiB limit");
  }
  flatbuffers::Verifier::Options options;
  options.max_depth = kMaxDepth;
  options.max_tables = kMaxTables;
  flatbuffers::Verifier verifier(data + kHeaderSize, static_cast<size_t>(body), options);
  if (!fb::VerifyPlanFragmentBuffer(verifier)) {
    return arrow::Status::Invalid("corrupt plan bytes: ", size,
                                  " bytes that do not verify as a plan fragment (truncated or damaged)");
  }
  return PlanReader(read_udf).Read(*fb::GetPlanFragment(data + kHeaderSize));
}

}  // namespace ketch::serde
