#pragma once

#include <arrow/api.h>
#include <gtest/gtest.h>

#include "ketch/functions/register.h"
#include "ketch/plan/logical/logical_plan.h"

#define ASSERT_OK(expr)                      \
  do {                                       \
    auto _st = (expr);                       \
    ASSERT_TRUE(_st.ok()) << _st.ToString(); \
  } while (0)

#define KETCH_CONCAT_INNER(a, b) a##b
#define KETCH_CONCAT(a, b) KETCH_CONCAT_INNER(a, b)
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  ASSERT_OK_AND_ASSIGN_IMPL(KETCH_CONCAT(_result_, __LINE__), lhs, rexpr)
#define ASSERT_OK_AND_ASSIGN_IMPL(result, lhs, rexpr)     \
  auto result = (rexpr);                                  \
  ASSERT_TRUE(result.ok()) << result.status().ToString(); \
  lhs = std::move(result).ValueUnsafe()

namespace ketch::testing {

/// A logical scan of one Parquet file that is never opened, with `schema`: a plan for optimizer
/// tests (run them without the MaterializeScanTasks rule, which reads footers).
inline LogicalPlanPtr FakeScan(std::shared_ptr<arrow::Schema> schema) {
  ScanInfo info;
  info.files = {ScanFile{"/data/a.parquet"}};
  info.file_schema = std::move(schema);
  return LogicalPlan::Scan(std::move(info)).ValueOrDie();
}

/// Registers kernels and types once for every test binary.
class Environment : public ::testing::Environment {
 public:
  void SetUp() override { ASSERT_TRUE(RegisterBuiltins().ok()); }
};

inline std::shared_ptr<arrow::Array> Int64s(const std::vector<int64_t>& values) {
  arrow::Int64Builder builder;
  EXPECT_TRUE(builder.AppendValues(values).ok());
  return builder.Finish().ValueOrDie();
}

}  // namespace ketch::testing
