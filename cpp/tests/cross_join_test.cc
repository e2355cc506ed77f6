#include "ketch/exec/blocking/cross_join.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace ketch {
namespace {

using testing::Int64s;

std::shared_ptr<arrow::RecordBatch> Batch(const std::string& name, const std::vector<int64_t>& values) {
  return arrow::RecordBatch::Make(arrow::schema({arrow::field(name, arrow::int64())}),
                                  static_cast<int64_t>(values.size()), {Int64s(values)});
}

TEST(CrossJoin, PairsEveryStreamedRowWithEveryMaterializedRow) {
  auto output = arrow::schema({arrow::field("l", arrow::int64()), arrow::field("r", arrow::int64())});
  for (bool materialized_left : {false, true}) {
    SCOPED_TRACE(materialized_left);
    auto materialized = materialized_left ? Batch("l", {1, 2}) : Batch("r", {10, 20, 30});
    auto streamed = materialized_left ? Batch("r", {10, 20, 30}) : Batch("l", {1, 2});
    CrossJoinOperator op(CrossJoinSide{materialized, materialized_left}, output, nullptr);
    EvalContext ctx;
    ctx.row_offset = 100;
    ctx.num_rows = streamed->num_rows();
    ASSERT_OK_AND_ASSIGN(auto out, op.Execute(streamed, &ctx));
    ASSERT_EQ(out->num_rows(), 6);
    EXPECT_TRUE(out->schema()->Equals(*output));
    std::vector<std::pair<int64_t, int64_t>> pairs;
    const auto& l = static_cast<const arrow::Int64Array&>(*out->column(0));
    const auto& r = static_cast<const arrow::Int64Array&>(*out->column(1));
    for (int64_t i = 0; i < out->num_rows(); ++i) pairs.emplace_back(l.Value(i), r.Value(i));
    std::sort(pairs.begin(), pairs.end());
    const std::vector<std::pair<int64_t, int64_t>> expected = {{1, 10}, {1, 20}, {1, 30},
                                                               {2, 10}, {2, 20}, {2, 30}};
    EXPECT_EQ(pairs, expected);
    // Each output row names the streamed row it came from.
    ASSERT_NE(ctx.source_rows, nullptr);
    EXPECT_EQ(ctx.source_rows->length(), 6);
    EXPECT_EQ(ctx.source_rows->Value(0), 100);
    EXPECT_EQ(ctx.source_rows->Value(5), 100 + streamed->num_rows() - 1);
  }
}

TEST(CrossJoin, EmptySidesAndMorselBound) {
  auto output = arrow::schema({arrow::field("l", arrow::int64()), arrow::field("r", arrow::int64())});
  CrossJoinOperator op(CrossJoinSide{Batch("r", {}), false}, output, nullptr);
  EvalContext ctx;
  ctx.num_rows = 3;
  ASSERT_OK_AND_ASSIGN(auto out, op.Execute(Batch("l", {1, 2, 3}), &ctx));
  EXPECT_EQ(out->num_rows(), 0);
  EXPECT_EQ(CrossJoinStreamRows(1000, 0), 1000);
  EXPECT_EQ(CrossJoinStreamRows(1000, 10), 100);
  EXPECT_EQ(CrossJoinStreamRows(1000, 5000), 1);
}

}  // namespace
}  // namespace ketch
