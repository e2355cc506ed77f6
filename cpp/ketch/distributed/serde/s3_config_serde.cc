// S3 settings of a scan or a write in plan bytes, isolated here because they hold credentials:
// the plan bytes carry the keys to the engine workers (trusted processes of the same job); they
// never appear in errors or explain.

#include "ketch/distributed/serde/plan_serde_internal.h"

namespace ketch::serde::internal {

// --- Writing ---

Offset<fb::S3Config> PlanWriter::WriteS3(const io::S3Config& s3) {
  return fb::CreateS3ConfigDirect(fbb_, s3.region.c_str(), s3.endpoint_override.c_str(), s3.scheme.c_str(),
                                  s3.key_id.c_str(), s3.access_key.c_str(), s3.session_token.c_str(),
                                  s3.anonymous);
}

// --- Reading ---

io::S3Config PlanReader::ReadS3(const fb::S3Config* s3) {
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

}  // namespace ketch::serde::internal
