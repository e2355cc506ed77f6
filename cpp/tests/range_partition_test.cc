#include "ketch/exec/range_partition.h"

#include <algorithm>
#include <random>

#include "test_util.h"

namespace ketch {
namespace {

std::shared_ptr<arrow::RecordBatch> Keys(const std::vector<int64_t>& values) {
  auto schema = arrow::schema({arrow::field("k", arrow::int64())});
  return arrow::RecordBatch::Make(schema, static_cast<int64_t>(values.size()), {testing::Int64s(values)});
}

std::vector<int32_t> Ids(const arrow::Int32Array& ids) {
  return std::vector<int32_t>(ids.raw_values(), ids.raw_values() + ids.length());
}

TEST(RangePartition, BoundariesFromASampleCutIntoEqualRangesInSortOrder) {
  std::vector<int64_t> values(1000);
  for (int64_t i = 0; i < 1000; ++i) values[i] = (i * 7919) % 1000;  // a permutation of 0..999
  ASSERT_OK_AND_ASSIGN(auto sample, arrow::Table::FromRecordBatches({Keys(values)}));
  RangeKeys keys{{"k"}, {false}, {false}};
  ASSERT_OK_AND_ASSIGN(auto bounds, RangeBoundaries(sample, keys, 4));
  ASSERT_EQ(bounds->num_rows(), 3);
  auto& b = static_cast<const arrow::Int64Array&>(*bounds->column(0));
  EXPECT_EQ(b.Value(0), 250);
  EXPECT_EQ(b.Value(1), 500);
  EXPECT_EQ(b.Value(2), 750);
  ASSERT_OK_AND_ASSIGN(auto ids, RangePartitionIds(*Keys(values), keys, bounds));
  std::vector<int> counts(4, 0);
  for (int64_t i = 0; i < 1000; ++i) {
    const int32_t p = ids->Value(i);
    counts[p]++;
    EXPECT_EQ(p, values[i] / 250) << values[i];  // each range holds a contiguous run of keys
  }
  EXPECT_EQ(counts, (std::vector<int>{250, 250, 250, 250}));
}

TEST(RangePartition, EqualKeysShareAPartitionAndDescendingNullsFirstAreHonoured) {
  RangeKeys desc{{"k"}, {true}, {true}};
  auto bounds = Keys({50, 20});  // descending: [> 50], [50 .. > 20], [20 and below]
  auto batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("k", arrow::int64())}), 6,
                                        {testing::Int64s({99, 50, 50, 21, 20, 1})});
  ASSERT_OK_AND_ASSIGN(auto ids, RangePartitionIds(*batch, desc, bounds));
  EXPECT_EQ(Ids(*ids), (std::vector<int32_t>{0, 1, 1, 1, 2, 2}));
  arrow::Int64Builder with_null;
  ASSERT_OK(with_null.AppendNull());
  ASSERT_OK(with_null.Append(5));
  auto nulls = arrow::RecordBatch::Make(arrow::schema({arrow::field("k", arrow::int64())}), 2,
                                        {with_null.Finish().ValueOrDie()});
  ASSERT_OK_AND_ASSIGN(ids, RangePartitionIds(*nulls, desc, bounds));
  EXPECT_EQ(Ids(*ids), (std::vector<int32_t>{0, 2}));  // nulls first: the first range
}

TEST(RangePartition, MismatchedKeyTypesAreRefused) {
  RangeKeys keys{{"k"}, {false}, {false}};
  auto strings = arrow::RecordBatch::Make(arrow::schema({arrow::field("k", arrow::utf8())}), 0,
                                          {arrow::MakeEmptyArray(arrow::utf8()).ValueOrDie()});
  auto result = RangePartitionIds(*strings, keys, Keys({1}));
  EXPECT_TRUE(result.status().IsTypeError()) << result.status().ToString();
}

}  // namespace
}  // namespace ketch
