// The filter → Lance SQL translation: what is pushed, how literals and names are quoted, and what
// stays with Ketch (untranslatable calls, float comparisons under NOT, floats re-checked).
#include "ketch/plan/logical/lance_filter.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ketch {
namespace {

ExprPtr Col(const std::string& name) { return Expr::Column(name); }
ExprPtr Lit(std::shared_ptr<arrow::Scalar> value) { return Expr::Literal(std::move(value)); }
ExprPtr Int(int64_t v) { return Lit(std::make_shared<arrow::Int64Scalar>(v)); }
ExprPtr Str(const std::string& v) { return Lit(std::make_shared<arrow::StringScalar>(v)); }
ExprPtr Call(const std::string& name, std::vector<ExprPtr> args) { return Expr::Call(name, std::move(args)); }

const arrow::Schema& TestSchema() {
  static const auto schema =
      arrow::schema({arrow::field("a", arrow::int64()), arrow::field("s", arrow::utf8()),
                     arrow::field("f", arrow::float64()), arrow::field("d", arrow::date32()),
                     arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO)),
                     arrow::field("tz", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
                     arrow::field("l", arrow::list(arrow::int64())), arrow::field("we`ird", arrow::int64())});
  return *schema;
}

TEST(LanceFilter, ComparisonsAndLogicTranslate) {
  auto filter =
      Call("and_kleene", {Call("or_kleene", {Call("less", {Col("a"), Int(5)}),
                                             Call("invert", {Call("equal", {Col("s"), Str("it's")})})}),
                          Call("is_valid", {Col("s")})});
  auto out = TranslateLanceFilter(filter, TestSchema());
  EXPECT_EQ(out.sql, "((`a` < 5) OR (NOT (`s` = 'it''s'))) AND (`s` IS NOT NULL)");
  EXPECT_EQ(out.num_pushed, 2);
  EXPECT_TRUE(out.residual.empty());
}

TEST(LanceFilter, DatesAndNaiveTimestampsTranslateZonedDoNot) {
  auto date = Lit(std::make_shared<arrow::Date32Scalar>(19723));  // 2024-01-01
  auto ts = Lit(
      std::make_shared<arrow::TimestampScalar>(1704067200000001, arrow::timestamp(arrow::TimeUnit::MICRO)));
  auto zoned =
      Lit(std::make_shared<arrow::TimestampScalar>(0, arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")));
  auto filter =
      Call("and_kleene",
           {Call("and_kleene", {Call("greater_equal", {Col("d"), date}), Call("less", {Col("ts"), ts})}),
            Call("less", {Col("tz"), zoned})});
  auto out = TranslateLanceFilter(filter, TestSchema());
  EXPECT_EQ(out.sql, "(`d` >= date '2024-01-01') AND (`ts` < timestamp '2024-01-01 00:00:00.000001')");
  ASSERT_EQ(out.residual.size(), 1u);
  EXPECT_EQ(out.residual[0]->children()[0]->name(), "tz");
}

TEST(LanceFilter, FloatsAreRecheckedAndNotPushedUnderNot) {
  auto greater = Call("greater", {Col("f"), Lit(std::make_shared<arrow::DoubleScalar>(1.5))});
  auto out = TranslateLanceFilter(greater, TestSchema());
  EXPECT_EQ(out.sql, "(`f` > 1.5)");
  EXPECT_EQ(out.residual.size(), 1u);  // Lance keeps NaN rows there: Ketch filters again
  auto negated = TranslateLanceFilter(Call("invert", {greater}), TestSchema());
  EXPECT_EQ(negated.sql, "");
  EXPECT_EQ(negated.residual.size(), 1u);
  auto whole = TranslateLanceFilter(Call("equal", {Col("f"), Int(2)}), TestSchema());
  EXPECT_EQ(whole.sql, "(`f` = 2)");
  auto nan = TranslateLanceFilter(
      Call("less", {Col("f"), Lit(std::make_shared<arrow::DoubleScalar>(std::nan("")))}), TestSchema());
  EXPECT_EQ(nan.sql, "");
}

TEST(LanceFilter, InListsAndWhatStaysWithKetch) {
  auto in = Call("or_kleene",
                 {Call("or_kleene", {Call("equal", {Col("a"), Int(1)}), Call("equal", {Col("a"), Int(2)})}),
                  Call("equal", {Int(3), Col("a")})});
  EXPECT_EQ(TranslateLanceFilter(in, TestSchema()).sql, "(`a` IN (1, 2, 3))");
  // Arithmetic, list columns, a backtick in a name, a null literal, a non-Kleene "and".
  for (const auto& untranslatable :
       {Call("greater", {Call("add", {Col("a"), Int(1)}), Int(3)}), Call("is_null", {Col("l")}),
        Call("equal", {Col("we`ird"), Int(1)}),
        Call("equal", {Col("a"), Lit(arrow::MakeNullScalar(arrow::int64()))}),
        Call("and", {Call("equal", {Col("a"), Int(1)}), Call("equal", {Col("a"), Int(2)})})}) {
    auto out = TranslateLanceFilter(untranslatable, TestSchema());
    EXPECT_EQ(out.sql, "") << untranslatable->ToString();
    EXPECT_EQ(out.residual.size(), 1u);
  }
  EXPECT_EQ(TranslateLanceFilter(nullptr, TestSchema()).sql, "");
}

}  // namespace
}  // namespace ketch
