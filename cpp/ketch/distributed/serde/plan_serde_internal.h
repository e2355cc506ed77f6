#pragma once

// Internals of the plan serializer (plan_serde.h), shared by its files: the FlatBuffers builder and
// verifier limits, Arrow IPC helpers (ipc_bytes.cc), and the writer and reader classes whose methods
// live by concept, writer and reader side by side: expr_serde.cc, scan_serde.cc,
// s3_config_serde.cc, node_serde.cc. Only these files include the generated plan_generated.h.

#include <arrow/api.h>
#include <flatbuffers/flatbuffers.h>
#include <parquet/metadata.h>

#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "ketch/distributed/serde/plan_generated.h"
#include "ketch/distributed/serde/plan_serde.h"

namespace ketch::serde::internal {

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

arrow::Result<std::shared_ptr<arrow::Buffer>> SchemaBytes(const arrow::Schema& schema);

arrow::Result<std::shared_ptr<arrow::Buffer>> TypeBytes(const std::shared_ptr<arrow::DataType>& type);

arrow::Result<std::shared_ptr<arrow::Buffer>> StreamBytes(
    const std::shared_ptr<arrow::Schema>& schema,
    const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches);

arrow::Result<std::shared_ptr<arrow::Buffer>> ScalarBytes(const std::shared_ptr<arrow::Scalar>& scalar);

// An owned, aligned copy of an embedded byte vector (the IPC readers return arrays that point into
// the buffer they read, which must outlive the plan; the caller's bytes need not).
arrow::Result<std::shared_ptr<arrow::Buffer>> Owned(const Vector<uint8_t>* bytes);

// A Parquet footer as the thrift bytes a file stores.
arrow::Result<std::shared_ptr<arrow::Buffer>> FooterBytes(const parquet::FileMetaData& metadata);

arrow::Status Corrupt(const std::string& what);

arrow::Result<std::shared_ptr<arrow::Schema>> ReadSchemaBytes(const Vector<uint8_t>* bytes, const char* what);

arrow::Result<std::shared_ptr<arrow::DataType>> ReadType(const Vector<uint8_t>* bytes);

struct Stream {
  std::shared_ptr<arrow::Schema> schema;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
};

arrow::Result<Stream> ReadStreamBytes(const Vector<uint8_t>* bytes, const char* what);

arrow::Result<std::shared_ptr<arrow::Scalar>> ReadScalar(const Vector<uint8_t>* bytes);

std::string Str(const flatbuffers::String* s);

std::vector<std::string> Strings(const Vector<Offset<flatbuffers::String>>* v);

template <typename T>
std::vector<T> Scalars(const Vector<T>* v) {
  return v ? std::vector<T>(v->begin(), v->end()) : std::vector<T>{};
}

class PlanWriter {
 public:
  explicit PlanWriter(const UdfPayloadWriter& write_udf) : write_udf_(write_udf) {}

  arrow::Result<std::shared_ptr<arrow::Buffer>> Write(const LogicalPlanPtr& plan);

 private:
  // Embedded bytes: counted against the format's size limit before they are copied in.
  arrow::Result<Offset<Vector<uint8_t>>> Bytes(const arrow::Buffer& buffer);
  arrow::Result<Offset<Vector<uint8_t>>> Bytes(const std::string& bytes);

  Offset<Vector<Offset<flatbuffers::String>>> StringList(const std::vector<std::string>& v);

  arrow::Result<Offset<fb::Expr>> WriteExpr(const ExprPtr& expr);

  arrow::Result<Offset<Vector<Offset<fb::Expr>>>> WriteExprs(const std::vector<ExprPtr>& exprs);

  arrow::Result<Offset<fb::Scan>> WriteScan(const ScanInfo& scan);

  static fb::FileFormat ToFb(FileFormat format);

  Offset<fb::S3Config> WriteS3(const io::S3Config& s3);

  arrow::Result<uint32_t> WriteNode(const LogicalPlanPtr& plan);

  const UdfPayloadWriter& write_udf_;
  flatbuffers::FlatBufferBuilder fbb_{1 << 16};
  std::vector<Offset<fb::PlanNode>> nodes_;
  std::unordered_map<const LogicalPlan*, uint32_t> index_;
  int64_t embedded_bytes_ = 0;
};

class PlanReader {
 public:
  explicit PlanReader(const UdfPayloadReader& read_udf) : read_udf_(read_udf) {}

  arrow::Result<LogicalPlanPtr> Read(const fb::PlanFragment& fragment);

 private:
  arrow::Result<ExprPtr> ReadExpr(const fb::Expr* e);

  arrow::Result<std::vector<ExprPtr>> ReadExprs(const Vector<Offset<fb::Expr>>* v);

  arrow::Result<FileFormat> ReadFormat(fb::FileFormat format);

  static io::S3Config ReadS3(const fb::S3Config* s3);

  arrow::Result<ScanInfo> ReadScan(const fb::Scan* s);

  arrow::Result<LogicalPlanPtr> ReadNode(const fb::PlanNode& n, flatbuffers::uoffset_t self);

  const UdfPayloadReader& read_udf_;
  std::vector<LogicalPlanPtr> plans_;
};

}  // namespace ketch::serde::internal
