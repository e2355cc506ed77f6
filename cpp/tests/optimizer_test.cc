#include "ketch/plan/optimizer/optimizer.h"

#include "test_util.h"

namespace ketch {
namespace {

::testing::Environment* const env = ::testing::AddGlobalTestEnvironment(new testing::Environment);

LogicalPlanPtr Scan() {
  return testing::FakeScan(arrow::schema({arrow::field("a", arrow::int64()), arrow::field("b", arrow::utf8()),
                                          arrow::field("c", arrow::float64())}));
}

ExprPtr Gt(const std::string& column, int64_t v) {
  return Expr::Call("greater", {Expr::Column(column), Expr::Literal(arrow::MakeScalar(v))});
}

class CountingUdf : public BatchUdf {
 public:
  std::string name() const override { return "my_udf"; }
  arrow::Result<std::shared_ptr<arrow::Array>> Call(const std::vector<std::shared_ptr<arrow::Array>>& args,
                                                    int64_t, const UdfCall&) override {
    return args[0];
  }
};

TEST(Optimizer, FilterAndProjectionReachTheScan) {
  LogicalPlanPtr plan;
  ASSERT_OK_AND_ASSIGN(
      plan, LogicalPlan::Project(Scan(), {Expr::Column("a"), Expr::Alias(Expr::Column("b"), "bee")}));
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Filter(plan, Gt("a", 3)));
  LogicalPlanPtr optimized;
  ASSERT_OK_AND_ASSIGN(optimized, Optimizer({"MaterializeScanTasks"}).Optimize(plan));
  ASSERT_EQ(optimized->kind(), LogicalKind::kProject);
  const auto& scan = optimized->inputs()[0];
  ASSERT_EQ(scan->kind(), LogicalKind::kScan);
  ASSERT_TRUE(scan->scan().columns.has_value());
  EXPECT_EQ(*scan->scan().columns, (std::vector<std::string>{"a", "b"}));
  ASSERT_NE(scan->scan().filter, nullptr);
  EXPECT_EQ(scan->scan().filter->ToString(), "(col(a) > lit(3))");
  EXPECT_EQ(optimized->schema()->ToString(), plan->schema()->ToString());
}

TEST(Optimizer, RenamedColumnIsSubstitutedWhenPushed) {
  LogicalPlanPtr plan;
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Project(Scan(), {Expr::Alias(Expr::Column("a"), "x")}));
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Filter(plan, Gt("x", 1)));
  LogicalPlanPtr optimized;
  ASSERT_OK_AND_ASSIGN(optimized, Optimizer({"MaterializeScanTasks"}).Optimize(plan));
  EXPECT_EQ(optimized->inputs()[0]->scan().filter->ToString(), "(col(a) > lit(1))");
}

TEST(Optimizer, FilterOnUdfOutputStaysAboveTheUdf) {
  auto udf = Expr::Udf(std::make_shared<CountingUdf>(), {Expr::Column("a")}, arrow::int64(), {});
  LogicalPlanPtr plan;
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Project(Scan(), {Expr::Column("a"), Expr::Alias(udf, "u")}));
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Filter(plan, Gt("u", 1)));
  LogicalPlanPtr optimized;
  ASSERT_OK_AND_ASSIGN(optimized, Optimizer({"MaterializeScanTasks"}).Optimize(plan));
  EXPECT_EQ(optimized->kind(), LogicalKind::kFilter);
  EXPECT_EQ(optimized->inputs()[0]->inputs()[0]->scan().filter, nullptr);
  // A filter on a passthrough column does go below the UDF.
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Project(Scan(), {Expr::Column("a"), Expr::Alias(udf, "u")}));
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Filter(plan, Gt("a", 1)));
  ASSERT_OK_AND_ASSIGN(optimized, Optimizer({"MaterializeScanTasks"}).Optimize(plan));
  EXPECT_EQ(optimized->kind(), LogicalKind::kProject);
  EXPECT_NE(optimized->inputs()[0]->scan().filter, nullptr);
}

TEST(Optimizer, DisabledRulesDoNotRun) {
  LogicalPlanPtr plan;
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Filter(Scan(), Gt("a", 3)));
  LogicalPlanPtr optimized;
  ASSERT_OK_AND_ASSIGN(optimized, Optimizer({"PushDownFilter", "MaterializeScanTasks"}).Optimize(plan));
  EXPECT_EQ(optimized->kind(), LogicalKind::kFilter);
}

TEST(LogicalPlan, TypeErrorsSurfaceAtPlanTime) {
  auto bad = Expr::Call("add", {Expr::Column("b"), Expr::Literal(arrow::MakeScalar(int64_t{1}))});
  auto result = LogicalPlan::Project(Scan(), {bad});
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(result.status().IsTypeError());
  EXPECT_NE(result.status().message().find("col(b): string"), std::string::npos)
      << result.status().ToString();
  auto missing = LogicalPlan::Project(Scan(), {Expr::Column("zz")});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("available columns: [a, b, c]"), std::string::npos);
  auto not_bool = LogicalPlan::Filter(Scan(), Expr::Column("a"));
  ASSERT_FALSE(not_bool.ok());
  EXPECT_TRUE(not_bool.status().IsTypeError());
}

}  // namespace
}  // namespace ketch
