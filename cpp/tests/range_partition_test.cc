#include "ketch/exec/range_partition.h"

#include <algorithm>
#include <optional>
#include <random>
#include <string>

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

std::shared_ptr<arrow::Array> Strings(const std::vector<std::optional<std::string>>& values) {
  arrow::StringBuilder builder;
  for (const auto& v : values) EXPECT_TRUE((v ? builder.Append(*v) : builder.AppendNull()).ok());
  return builder.Finish().ValueOrDie();
}

std::vector<int64_t> Payload(const arrow::Table& table) {
  std::vector<int64_t> out;
  for (const auto& chunk : table.GetColumnByName("row")->chunks()) {
    const auto& values = static_cast<const arrow::Int64Array&>(*chunk);
    for (int64_t i = 0; i < values.length(); ++i) out.push_back(values.Value(i));
  }
  return out;
}

TEST(RangePartition, TableSplitsIntoRangesKeepingRowOrderAcrossChunks) {
  auto schema = arrow::schema({arrow::field("s", arrow::utf8()), arrow::field("row", arrow::int64())});
  auto first = arrow::RecordBatch::Make(
      schema, 4, {Strings({"b", std::nullopt, "a", "d"}), testing::Int64s({0, 1, 2, 3})});
  auto second =
      arrow::RecordBatch::Make(schema, 3, {Strings({"c", "b", std::nullopt}), testing::Int64s({4, 5, 6})});
  ASSERT_OK_AND_ASSIGN(auto table, arrow::Table::FromRecordBatches(schema, {first, second}));
  RangeKeys keys{{"s"}, {false}, {true}};  // nulls first, then "a" < "b" < ...
  auto bounds_schema = arrow::schema({arrow::field("s", arrow::utf8())});
  auto bounds = arrow::RecordBatch::Make(bounds_schema, 2, {Strings({"a", "c"})});
  ASSERT_OK_AND_ASSIGN(auto parts, RangePartitionTable(table, keys, bounds, 3));
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(Payload(*parts[0]), (std::vector<int64_t>{1, 6}));     // the nulls, in input order
  EXPECT_EQ(Payload(*parts[1]), (std::vector<int64_t>{0, 2, 5}));  // "a" .. before "c"
  EXPECT_EQ(Payload(*parts[2]), (std::vector<int64_t>{3, 4}));     // "c" and after
  for (const auto& part : parts) {
    EXPECT_TRUE(part->schema()->Equals(*schema));
    EXPECT_LE(part->column(0)->num_chunks(), 1);
  }

  // No boundaries (an empty sample): everything in range 0, the other ranges empty.
  ASSERT_OK_AND_ASSIGN(auto none, RangeBoundaries(arrow::Table::Make(bounds_schema, {Strings({})}), keys, 3));
  EXPECT_EQ(none->num_rows(), 0);
  ASSERT_OK_AND_ASSIGN(parts, RangePartitionTable(table, keys, none, 3));
  EXPECT_EQ(Payload(*parts[0]), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(parts[1]->num_rows(), 0);
  EXPECT_EQ(parts[2]->num_rows(), 0);

  // An empty table: empty ranges with the table's schema.
  ASSERT_OK_AND_ASSIGN(auto empty, arrow::Table::MakeEmpty(schema));
  ASSERT_OK_AND_ASSIGN(parts, RangePartitionTable(empty, keys, bounds, 3));
  for (const auto& part : parts) {
    EXPECT_EQ(part->num_rows(), 0);
    EXPECT_TRUE(part->schema()->Equals(*schema));
  }
}

TEST(RangePartition, TableSplitRefusesMissingKeysAndTooManyBoundaries) {
  auto schema = arrow::schema({arrow::field("k", arrow::int64())});
  auto table = arrow::Table::Make(schema, {testing::Int64s({1, 2, 3})});
  RangeKeys missing{{"x"}, {false}, {false}};
  EXPECT_TRUE(RangePartitionTable(table, missing, Keys({2}), 2).status().IsKeyError());
  RangeKeys keys{{"k"}, {false}, {false}};
  EXPECT_TRUE(RangePartitionTable(table, keys, Keys({1, 2}), 2).status().IsInvalid());
}

}  // namespace
}  // namespace ketch
