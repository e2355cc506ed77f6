#include "ketch/plan/logical/logical_plan.h"

// Join specs: the join types' names (Daft's `how`), strategies, and the common type of two keys.

namespace ketch {

arrow::Result<JoinType> ParseJoinType(const std::string& how) {
  if (how == "inner") return JoinType::kInner;
  if (how == "left") return JoinType::kLeft;
  if (how == "right") return JoinType::kRight;
  if (how == "outer") return JoinType::kOuter;
  if (how == "semi") return JoinType::kSemi;
  if (how == "anti") return JoinType::kAnti;
  if (how == "cross") return JoinType::kCross;
  return arrow::Status::Invalid("unknown join type '", how,
                                "' (one of inner, left, right, outer, semi, anti)");
}

std::string JoinTypeName(JoinType type) {
  switch (type) {
    case JoinType::kInner:
      return "inner";
    case JoinType::kLeft:
      return "left";
    case JoinType::kRight:
      return "right";
    case JoinType::kOuter:
      return "outer";
    case JoinType::kSemi:
      return "semi";
    case JoinType::kAnti:
      return "anti";
    case JoinType::kCross:
      return "cross";
  }
  return "?";
}

arrow::Status ValidateJoinStrategy(const std::string& strategy, JoinType how) {
  if (strategy.empty()) return arrow::Status::OK();
  if (strategy != "hash" && strategy != "sort_merge" && strategy != "broadcast") {
    return arrow::Status::Invalid("join strategy '", strategy,
                                  "' is not supported; choose one of hash, sort_merge, broadcast");
  }
  if (how == JoinType::kCross) return arrow::Status::Invalid("In a cross join, `strategy` cannot be set");
  if (strategy == "sort_merge" && how != JoinType::kInner) {
    return arrow::Status::Invalid("Sort merge join only supports inner joins");
  }
  if (strategy == "broadcast" && how == JoinType::kOuter) {
    return arrow::Status::Invalid("Broadcast join does not support outer joins");
  }
  return arrow::Status::OK();
}

std::shared_ptr<arrow::DataType> JoinKeyCast(const arrow::DataType& l, const arrow::DataType& r) {
  if (l.Equals(r)) return nullptr;
  if (arrow::is_string(l.id())) return arrow::large_utf8();
  if (arrow::is_unsigned_integer(l.id()) && arrow::is_unsigned_integer(r.id())) return arrow::uint64();
  return arrow::int64();
}

}  // namespace ketch
