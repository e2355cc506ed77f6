// One test group per optimizer rule: each rule alone on a small plan, asserting the plan shape.
#include "ketch/plan/optimizer/merge_projections.h"
#include "ketch/plan/optimizer/push_down_limit.h"
#include "ketch/plan/optimizer/simplify_expressions.h"
#include "ketch/plan/optimizer/stats_pruning.h"
#include "test_util.h"

namespace ketch {
namespace {

::testing::Environment* const env = ::testing::AddGlobalTestEnvironment(new testing::Environment);

LogicalPlanPtr Scan() {
  return testing::FakeScan(
      arrow::schema({arrow::field("a", arrow::int64()), arrow::field("b", arrow::float64())}));
}

ExprPtr Lit(int64_t v) { return Expr::Literal(arrow::MakeScalar(v)); }
ExprPtr Col(const std::string& name) { return Expr::Column(name); }

TEST(SimplifyExpressions, FoldsConstantsAndKeepsNames) {
  auto sum = Expr::Call("add_checked", {Lit(2), Expr::Call("multiply_checked", {Lit(3), Lit(4)})});
  LogicalPlanPtr plan;
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Project(Scan(), {Col("a"), Expr::Alias(sum, "c")}));
  Transformed out;
  ASSERT_OK_AND_ASSIGN(out, SimplifyExpressions().Apply(plan));
  ASSERT_TRUE(out.changed);
  EXPECT_EQ(out.plan->exprs()[1]->ToString(), "lit(14) as c");
  EXPECT_EQ(out.plan->schema()->ToString(), plan->schema()->ToString());
}

TEST(SimplifyExpressions, DropsAlwaysTrueFilterAndSimplifiesBooleans) {
  auto t = Expr::Literal(std::make_shared<arrow::BooleanScalar>(true));
  auto gt = Expr::Call("greater", {Col("a"), Lit(1)});
  LogicalPlanPtr plan;
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Filter(Scan(), Expr::Call("or_kleene", {gt, t})));
  Transformed out;
  ASSERT_OK_AND_ASSIGN(out, SimplifyExpressions().Apply(plan));
  EXPECT_EQ(out.plan->kind(), LogicalKind::kScan);
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Filter(Scan(), Expr::Call("and_kleene", {t, gt})));
  ASSERT_OK_AND_ASSIGN(out, SimplifyExpressions().Apply(plan));
  ASSERT_EQ(out.plan->kind(), LogicalKind::kFilter);
  // `true and x` is x; the int64 literal already has the column's type.
  EXPECT_EQ(out.plan->predicate()->ToString(), "(col(a) > lit(1))");
}

TEST(PushDownLimit, MovesBelowProjectionsAndIntoTheScan) {
  LogicalPlanPtr plan;
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Project(Scan(), {Col("b")}));
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Limit(plan, 7));
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Limit(plan, 9));
  LogicalPlanPtr current = plan;
  for (int i = 0; i < 4; ++i) {
    Transformed out;
    ASSERT_OK_AND_ASSIGN(out, PushDownLimit().Apply(current));
    current = out.plan;
  }
  ASSERT_EQ(current->kind(), LogicalKind::kProject);
  ASSERT_EQ(current->inputs()[0]->kind(), LogicalKind::kLimit);
  EXPECT_EQ(current->inputs()[0]->limit(), 7);
  const auto& scan = current->inputs()[0]->inputs()[0];
  ASSERT_EQ(scan->kind(), LogicalKind::kScan);
  EXPECT_EQ(scan->scan().limit, 7);
}

TEST(MergeProjections, MergesAndDropsIdentity) {
  LogicalPlanPtr plan;
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Project(Scan(), {Col("a"), Col("b")}));  // identity
  ASSERT_OK_AND_ASSIGN(
      plan,
      LogicalPlan::Project(plan, {Expr::Alias(Expr::Call("multiply_checked", {Col("a"), Lit(2)}), "x")}));
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Project(plan, {Expr::Call("add_checked", {Col("x"), Lit(1)})}));
  LogicalPlanPtr current = plan;
  for (int i = 0; i < 3; ++i) {
    Transformed out;
    ASSERT_OK_AND_ASSIGN(out, MergeProjections().Apply(current));
    current = out.plan;
  }
  ASSERT_EQ(current->kind(), LogicalKind::kProject);
  EXPECT_EQ(current->inputs()[0]->kind(), LogicalKind::kScan);
  EXPECT_EQ(current->exprs()[0]->ToString(), "((col(a) * lit(2)) + lit(1)) as x");
}

TEST(MergeProjections, KeepsAnExpressionUsedTwice) {
  LogicalPlanPtr plan;
  ASSERT_OK_AND_ASSIGN(
      plan,
      LogicalPlan::Project(Scan(), {Expr::Alias(Expr::Call("multiply_checked", {Col("a"), Lit(3)}), "t")}));
  ASSERT_OK_AND_ASSIGN(plan, LogicalPlan::Project(plan, {Expr::Call("add_checked", {Col("t"), Col("t")})}));
  Transformed out;
  ASSERT_OK_AND_ASSIGN(out, MergeProjections().Apply(plan));
  EXPECT_FALSE(out.changed);
}

TEST(StatsPruning, ComparisonsAgainstMinMax) {
  ColumnStats stats{arrow::MakeScalar(int64_t{10}), arrow::MakeScalar(int64_t{20}), 0, 100};
  auto lookup = [&](const std::string& name) -> std::optional<ColumnStats> {
    if (name == "a") return stats;
    return std::nullopt;
  };
  auto cmp = [](const char* op, ExprPtr l, ExprPtr r) {
    return Expr::Call(op, {std::move(l), std::move(r)});
  };
  EXPECT_TRUE(CannotMatch(*cmp("less", Col("a"), Lit(10)), lookup));
  EXPECT_FALSE(CannotMatch(*cmp("less_equal", Col("a"), Lit(10)), lookup));
  EXPECT_TRUE(CannotMatch(*cmp("greater", Col("a"), Lit(20)), lookup));
  EXPECT_TRUE(CannotMatch(*cmp("equal", Col("a"), Lit(21)), lookup));
  EXPECT_FALSE(CannotMatch(*cmp("equal", Col("a"), Lit(15)), lookup));
  EXPECT_TRUE(CannotMatch(*cmp("greater", Lit(10), Col("a")), lookup));  // 10 > a: a < 10
  EXPECT_FALSE(CannotMatch(*cmp("equal", Col("b"), Lit(15)), lookup));   // no statistics
  auto both = Expr::Call("and_kleene", {cmp("greater", Col("a"), Lit(15)), cmp("less", Col("a"), Lit(5))});
  EXPECT_TRUE(CannotMatch(*both, lookup));
  auto either = Expr::Call("or_kleene", {cmp("greater", Col("a"), Lit(15)), cmp("less", Col("a"), Lit(5))});
  EXPECT_FALSE(CannotMatch(*either, lookup));
  EXPECT_TRUE(CannotMatch(*Expr::Call("is_null", {Col("a")}), lookup));  // null_count == 0
  // 2.5 is not an int64: the cast changes it, so nothing is proven.
  EXPECT_FALSE(CannotMatch(*cmp("equal", Col("a"), Expr::Literal(arrow::MakeScalar(2.5))), lookup));
}

}  // namespace
}  // namespace ketch
