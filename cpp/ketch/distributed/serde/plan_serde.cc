#include "ketch/distributed/serde/plan_serde.h"

#include <cstring>

#include "ketch/distributed/serde/plan_serde_internal.h"

// The entry points: a plan to bytes (a header, then a FlatBuffer) and back, verified before it is
// read. The writer and reader live by concept in expr_serde.cc, scan_serde.cc, s3_config_serde.cc
// and node_serde.cc (plan_serde_internal.h).

namespace ketch::serde {

using internal::PlanReader;
using internal::PlanWriter;
using namespace internal;  // the header's constants

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
