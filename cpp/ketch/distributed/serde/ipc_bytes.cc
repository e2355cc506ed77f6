// Arrow values (schemas, types, record batch streams, scalars, Parquet footers) as the IPC bytes
// embedded in plan bytes, and back; and the FlatBuffers string helpers.

#include <arrow/io/memory.h>
#include <arrow/ipc/api.h>

#include "ketch/distributed/serde/plan_serde_internal.h"
#include "ketch/io/formats/parquet_footers.h"

namespace ketch::serde::internal {

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

}  // namespace ketch::serde::internal
