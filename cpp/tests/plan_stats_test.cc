#include "ketch/plan/logical/plan_stats.h"

#include "test_util.h"

namespace ketch {
namespace {

::testing::Environment* const env = ::testing::AddGlobalTestEnvironment(new testing::Environment);

LogicalPlanPtr InMemoryInts(int64_t n, std::vector<int64_t> partitions = {}) {
  std::vector<int64_t> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = i;
  auto schema = arrow::schema({arrow::field("a", arrow::int64())});
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  if (partitions.empty()) {
    batches.push_back(arrow::RecordBatch::Make(schema, n, {testing::Int64s(values)}));
  } else {
    // One batch per partition, the rows split evenly.
    const int64_t per = n / static_cast<int64_t>(partitions.size());
    for (size_t i = 0; i < partitions.size(); ++i) {
      std::vector<int64_t> part(values.begin() + i * per, values.begin() + (i + 1) * per);
      batches.push_back(arrow::RecordBatch::Make(schema, per, {testing::Int64s(part)}));
    }
  }
  return LogicalPlan::InMemory(schema, std::move(batches), std::move(partitions)).ValueOrDie();
}

ExprPtr Gt(const std::string& column, int64_t v) {
  return Expr::Call("greater", {Expr::Column(column), Expr::Literal(arrow::MakeScalar(v))});
}

TEST(PlanStats, InMemorySourceIsExact) {
  const auto stats = EstimateStats(*InMemoryInts(1000, {0, 1, 2, 3}));
  EXPECT_EQ(stats.rows, 1000);
  EXPECT_EQ(stats.bytes, 8000);  // 4 batches of 250 int64 values, no nulls
  EXPECT_TRUE(stats.exact);
  EXPECT_TRUE(stats.bytes_exact);
  EXPECT_FALSE(stats.has_selectivity);
  EXPECT_EQ(stats.num_partitions, 4);
  EXPECT_EQ(StatsLine(stats), "Stats = { Num rows = 1,000, Size bytes = 7.8 KiB, Num partitions = 4 }");
}

TEST(PlanStats, FilterKeepsAQuarterAndLimitCaps) {
  LogicalPlanPtr plan;
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Filter(InMemoryInts(1000), Gt("a", 3)));
  auto stats = EstimateStats(*plan);
  EXPECT_EQ(stats.rows, 250);
  EXPECT_EQ(stats.bytes, 2000);
  EXPECT_FALSE(stats.exact);
  EXPECT_TRUE(stats.has_selectivity);
  EXPECT_EQ(StatsLine(stats),
            "Stats = { Approx num rows = 250, Approx size bytes = 2.0 KiB, Selectivity = 0.25, Num "
            "partitions = 1 }");
  EXPECT_EQ(EstimateRows(*plan), 250);

  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Limit(InMemoryInts(1000), 10));
  stats = EstimateStats(*plan);
  EXPECT_EQ(stats.rows, 10);
  EXPECT_EQ(stats.bytes, 80);
  EXPECT_TRUE(stats.exact);
  EXPECT_FALSE(stats.bytes_exact);
}

TEST(PlanStats, ScanBeforeScanTasksEstimatesFromFileSizes) {
  ScanInfo info;
  info.files = {ScanFile{"/data/a.csv", 10'000}, ScanFile{"/data/b.csv", 30'000}};
  info.format = FileFormat::kCsv;
  info.file_schema = arrow::schema({arrow::field("a", arrow::int64()), arrow::field("b", arrow::utf8())});
  info.columns = std::vector<std::string>{"a"};
  LogicalPlanPtr plan;
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Scan(std::move(info)));
  const auto stats = EstimateStats(*plan);
  EXPECT_EQ(stats.rows, 400);      // 100 bytes a row
  EXPECT_EQ(stats.bytes, 20'000);  // half the columns
  EXPECT_FALSE(stats.exact);
  EXPECT_EQ(stats.num_partitions, 2);
  EXPECT_FALSE(stats.partitions_exact);
  EXPECT_EQ(StatsLine(stats),
            "Stats = { Approx num rows = 400, Approx size bytes = 19.5 KiB, Approx num partitions = 2 }");
}

TEST(PlanStats, ProjectScalesBytesByRowWidth) {
  LogicalPlanPtr plan;
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Project(InMemoryInts(100),
                                                  {Expr::Column("a"), Expr::Alias(Expr::Column("a"), "b")}));
  const auto stats = EstimateStats(*plan);
  EXPECT_EQ(stats.rows, 100);
  EXPECT_TRUE(stats.exact);
  EXPECT_DOUBLE_EQ(stats.bytes, 1600);
}

TEST(PlanStats, FormatBytesUsesBinaryUnits) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.0 KiB");
  EXPECT_EQ(FormatBytes(1.5 * 1024 * 1024), "1.5 MiB");
  EXPECT_EQ(FormatBytes(3.0 * 1024 * 1024 * 1024), "3.0 GiB");
  EXPECT_EQ(FormatBytes(2048.0 * 1024 * 1024 * 1024 * 1024), "2048.0 TiB");
}

TEST(PlanStats, RowWidthFromTypes) {
  EXPECT_DOUBLE_EQ(EstimatedRowWidth(*arrow::schema({arrow::field("a", arrow::int64())})), 8.125);
  EXPECT_DOUBLE_EQ(EstimatedRowWidth(*arrow::schema({arrow::field("s", arrow::utf8())})), 20.125);
  EXPECT_DOUBLE_EQ(EstimatedRowWidth(*arrow::schema({arrow::field("l", arrow::list(arrow::int32()))})),
                   4 + 4 * 4 + 0.125);
  EXPECT_DOUBLE_EQ(EstimatedRowWidth(*arrow::schema({})), 1);
}

}  // namespace
}  // namespace ketch
