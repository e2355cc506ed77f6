#include "ketch/exec/executor.h"

#include <numeric>

#include "ketch/plan/optimizer/optimizer.h"
#include "test_util.h"

namespace ketch {
namespace {

::testing::Environment* const env = ::testing::AddGlobalTestEnvironment(new testing::Environment);

LogicalPlanPtr Range(int64_t n, int64_t batch_rows) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  auto schema = arrow::schema({arrow::field("x", arrow::int64())});
  for (int64_t start = 0; start < n; start += batch_rows) {
    std::vector<int64_t> values(std::min(batch_rows, n - start));
    std::iota(values.begin(), values.end(), start);
    batches.push_back(arrow::RecordBatch::Make(schema, values.size(), {testing::Int64s(values)}));
  }
  return LogicalPlan::InMemory(schema, batches).ValueOrDie();
}

std::vector<int64_t> Column(const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches, int i) {
  std::vector<int64_t> out;
  for (const auto& b : batches) {
    auto& a = static_cast<const arrow::Int64Array&>(*b->column(i));
    for (int64_t r = 0; r < a.length(); ++r) out.push_back(a.Value(r));
  }
  return out;
}

TEST(Executor, ProjectFilterKeepOrderAcrossManyMorsels) {
  auto plan = Range(10000, 1000);
  auto doubled = Expr::Call("multiply", {Expr::Column("x"), Expr::Literal(arrow::MakeScalar(int64_t{2}))});
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Project(plan, {Expr::Alias(doubled, "y")}));
  auto pred = Expr::Call(
      "equal", {Expr::Call("bit_wise_and", {Expr::Column("y"), Expr::Literal(arrow::MakeScalar(int64_t{4}))}),
                Expr::Literal(arrow::MakeScalar(int64_t{0}))});
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Filter(plan, pred));
  ExecutionConfig config;
  config.morsel_size_rows = 64;  // many morsels in flight, finishing out of order
  ExecutionStats stats;
  std::shared_ptr<const PhysicalNode> physical;
  ASSERT_OK_AND_ASSIGN(physical, TranslateToPhysical(plan, config.Resolved()));
  std::vector<std::shared_ptr<arrow::RecordBatch>> out;
  ASSERT_OK_AND_ASSIGN(out, ExecutePlan(physical, config, &stats));
  std::vector<int64_t> expected;
  for (int64_t x = 0; x < 10000; ++x) {
    if (((2 * x) & 4) == 0) expected.push_back(2 * x);
  }
  EXPECT_EQ(Column(out, 0), expected);
  EXPECT_EQ(stats.rows_emitted.load(), 10000);
  EXPECT_LE(stats.max_morsels_in_flight.load(), config.Resolved().max_morsels_in_flight);
}

TEST(Executor, LimitStopsEarlyAndKeepsFirstRows) {
  auto plan = Range(1'000'000, 1000);
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Limit(plan, 1234));
  ExecutionConfig config;
  config.morsel_size_rows = 100;
  ExecutionStats stats;
  std::shared_ptr<const PhysicalNode> physical;
  ASSERT_OK_AND_ASSIGN(physical, TranslateToPhysical(plan, config.Resolved()));
  std::vector<std::shared_ptr<arrow::RecordBatch>> out;
  ASSERT_OK_AND_ASSIGN(out, ExecutePlan(physical, config, &stats));
  std::vector<int64_t> expected(1234);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(Column(out, 0), expected);
  // The source stopped long before reading the million rows.
  EXPECT_LT(stats.rows_emitted.load(), 100'000);
}

TEST(Executor, BoundedMorselsInFlight) {
  auto plan = Range(50000, 5000);
  ExecutionConfig config;
  config.morsel_size_rows = 10;
  config.max_morsels_in_flight = 3;
  ExecutionStats stats;
  std::shared_ptr<const PhysicalNode> physical;
  ASSERT_OK_AND_ASSIGN(physical, TranslateToPhysical(plan, config.Resolved()));
  std::vector<std::shared_ptr<arrow::RecordBatch>> out;
  ASSERT_OK_AND_ASSIGN(out, ExecutePlan(physical, config, &stats));
  EXPECT_EQ(Column(out, 0).size(), 50000u);
  EXPECT_EQ(stats.morsels_emitted.load(), 5000);
  EXPECT_LE(stats.max_morsels_in_flight.load(), 3);
}

TEST(Executor, ErrorInOperatorIsReturned) {
  auto plan = Range(1000, 100);
  auto bad = Expr::Call("divide", {Expr::Column("x"), Expr::Literal(arrow::MakeScalar(int64_t{0}))});
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Project(plan, {bad}));
  std::shared_ptr<const PhysicalNode> physical;
  ASSERT_OK_AND_ASSIGN(physical, TranslateToPhysical(plan, ExecutionConfig{}.Resolved()));
  auto out = ExecutePlan(physical, ExecutionConfig{});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("divide by zero"), std::string::npos) << out.status().ToString();
}

}  // namespace
}  // namespace ketch
