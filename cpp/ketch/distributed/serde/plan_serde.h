#pragma once

// Plan fragments as bytes, for sending them to other processes (the distributed runner's engine
// workers). Only logical plans are serialized: a physical plan is derived deterministically from
// the optimized logical plan by TranslateToPhysical, so sending the optimized logical plan and
// translating it on the receiving side gives the same physical plan (same `explain` text).
//
// Format: an 8-byte header, the ASCII magic "KTPL" then the format version as a little-endian
// uint32 (kPlanFormatVersion), followed by a FlatBuffer (schema: plan.fbs, root PlanFragment).
// Arrow types, schemas, literals and in-memory batches are embedded as Arrow IPC bytes. A plan node
// reached twice (a self-join) is sent once. A scan's scan tasks travel with the Parquet footers
// the optimizer read for them (thrift bytes, as in the files): the receiver reads no footer again
// and explain's stats (row counts, column sizes) stay the same; a scan whose tasks lack a footer
// reads it when it opens the file (once per file, through the scan's footer cache).
//
// S3 credentials of scans travel inside the bytes (the workers need them): treat the bytes as
// secret. Errors never quote them.

#include <arrow/api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ketch/expr/expr.h"
#include "ketch/plan/logical/logical_plan.h"

namespace ketch::serde {

/// The format version this build writes and reads; bumped on any incompatible change of plan.fbs.
inline constexpr uint32_t kPlanFormatVersion = 1;

/// Turns the implementation of a UDF expression (Expr kind kUdf) into bytes (the Python bindings:
/// cloudpickle of the runner object). Errors fail the serialization.
using UdfPayloadWriter = std::function<arrow::Result<std::string>(const Expr& udf_expr)>;

/// Rebuilds a UDF implementation from the name, payload bytes and properties written for it.
using UdfPayloadReader = std::function<arrow::Result<std::shared_ptr<BatchUdf>>(
    const std::string& name, const std::string& payload, const UdfProperties& properties)>;

/// Serializes `plan` (any logical plan, optimized or not). `write_udf` is called once per UDF
/// expression; it may be empty when the plan has none (else Invalid). CapacityError when the plan
/// (in-memory data included) does not fit the format's 2 GiB limit.
arrow::Result<std::shared_ptr<arrow::Buffer>> SerializePlan(const LogicalPlanPtr& plan,
                                                            const UdfPayloadWriter& write_udf);

/// Rebuilds a plan from SerializePlan's bytes; every node is re-validated by its factory, so its
/// schema is re-derived. Invalid, naming both versions, when the bytes are of another format
/// version; Invalid for bytes that are not a plan or are truncated or corrupt (checked with the
/// FlatBuffers verifier before anything is read). `read_udf` may be empty when the plan has no UDF.
arrow::Result<LogicalPlanPtr> DeserializePlan(const arrow::Buffer& bytes, const UdfPayloadReader& read_udf);

}  // namespace ketch::serde
