// GlobalAggregate (aggregation without group keys as a plain reduction) gives what Acero's hash
// aggregate grouped by a constant key gives: same columns, types and values, over several chunks
// with nulls; the exact int64 float sum; nullopt for what it does not implement.
#include "ketch/exec/blocking/global_aggregate.h"

#include <arrow/acero/exec_plan.h>
#include <arrow/acero/options.h>
#include <arrow/compute/api.h>
#include <arrow/json/from_string.h>

#include "test_util.h"

namespace ketch {
namespace {

namespace ac = arrow::acero;
namespace cp = arrow::compute;

constexpr const char* kKey = "__ketch_all";

// Two chunks of (key 0, int64 i, float64 f, string s), nulls in every column.
std::shared_ptr<arrow::Table> Input() {
  auto schema = arrow::schema({arrow::field(kKey, arrow::int8()), arrow::field("i", arrow::int64()),
                               arrow::field("f", arrow::float64()), arrow::field("s", arrow::utf8())});
  auto chunk = [&](const std::string& i, const std::string& f, const std::string& s, int64_t n) {
    return arrow::RecordBatch::Make(
        schema, n,
        {ZerosInt8(n).ValueOrDie(), arrow::json::ArrayFromJSONString(arrow::int64(), i).ValueOrDie(),
         arrow::json::ArrayFromJSONString(arrow::float64(), f).ValueOrDie(),
         arrow::json::ArrayFromJSONString(arrow::utf8(), s).ValueOrDie()});
  };
  return arrow::Table::FromRecordBatches(
             schema, {chunk("[null, 5, -3]", "[1.5, null, 0.25]", R"(["b", null, "a"])", 3),
                      chunk("[7, null]", "[null, -2.0]", R"([null, "c"])", 2)})
      .ValueOrDie();
}

std::vector<cp::Aggregate> Aggregates() {
  auto all = std::make_shared<cp::CountOptions>(cp::CountOptions::ALL);
  return {{"hash_sum", "i", "i_sum"},
          {"hash_count", all, "i", "i_all"},
          {"hash_count", std::make_shared<cp::CountOptions>(cp::CountOptions::ONLY_NULL), "i", "i_null"},
          {"hash_min", "i", "i_min"},
          {"hash_max", "s", "s_max"},
          {"hash_one", "s", "s_one"},
          {"hash_sum", "f", "f_sum"},
          {"hash_stddev", std::make_shared<cp::VarianceOptions>(0), "f", "f_std"},
          {"hash_list", "s", "s_list"}};
}

TEST(GlobalAggregate, EqualsTheHashAggregateOverTheConstantKey) {
  auto table = Input();
  ASSERT_OK_AND_ASSIGN(auto reduced, GlobalAggregate(*table, Aggregates(), kKey));
  ASSERT_TRUE(reduced.has_value());
  ASSERT_OK_AND_ASSIGN(
      auto hashed,
      ac::DeclarationToTable(
          ac::Declaration::Sequence({{"table_source", ac::TableSourceNodeOptions(table)},
                                     {"aggregate", ac::AggregateNodeOptions(Aggregates(), {kKey})}}),
          /*use_threads=*/false));
  ASSERT_EQ((*reduced)->num_rows(), 1);
  ASSERT_EQ(hashed->num_rows(), 1);
  for (const auto& field : hashed->schema()->fields()) {
    auto got = (*reduced)->GetColumnByName(field->name());
    ASSERT_NE(got, nullptr) << field->name();
    EXPECT_TRUE(got->type()->Equals(*field->type())) << field->name() << ": " << got->type()->ToString();
    ASSERT_OK_AND_ASSIGN(auto want, hashed->GetColumnByName(field->name())->GetScalar(0));
    ASSERT_OK_AND_ASSIGN(auto value, got->GetScalar(0));
    EXPECT_TRUE(value->ApproxEquals(*want))
        << field->name() << ": " << value->ToString() << " vs " << want->ToString();
  }
}

TEST(GlobalAggregate, Float64SumIsExactBeforeRoundingAndNullWithoutValues) {
  auto big =
      arrow::json::ArrayFromJSONString(arrow::int64(), "[9223372036854775807, 9223372036854775807, null]")
          .ValueOrDie();
  auto none = arrow::json::ArrayFromJSONString(arrow::int64(), "[null, null]").ValueOrDie();
  auto table = arrow::Table::Make(arrow::schema({arrow::field("v", arrow::int64())}),
                                  {std::make_shared<arrow::ChunkedArray>(arrow::ArrayVector{big, none})});
  ASSERT_OK_AND_ASSIGN(auto reduced, GlobalAggregate(*table, {{kGlobalFloat64Sum, "v", "fsum"}}, kKey));
  ASSERT_TRUE(reduced.has_value());
  ASSERT_OK_AND_ASSIGN(auto sum, (*reduced)->GetColumnByName("fsum")->GetScalar(0));
  EXPECT_EQ(static_cast<const arrow::DoubleScalar&>(*sum).value, 2.0 * 9223372036854775807.0);
  auto empty = arrow::Table::Make(arrow::schema({arrow::field("v", arrow::int64())}),
                                  {std::make_shared<arrow::ChunkedArray>(arrow::ArrayVector{none})});
  ASSERT_OK_AND_ASSIGN(auto nothing, GlobalAggregate(*empty, {{kGlobalFloat64Sum, "v", "fsum"}}, kKey));
  ASSERT_OK_AND_ASSIGN(auto null_sum, (*nothing)->GetColumnByName("fsum")->GetScalar(0));
  EXPECT_FALSE(null_sum->is_valid);
}

TEST(GlobalAggregate, NoRowsGiveAnEmptyBatchAndUnknownFunctionsNullopt) {
  auto table = Input()->Slice(0, 0);
  ASSERT_OK_AND_ASSIGN(auto reduced, GlobalAggregate(*table, Aggregates(), kKey));
  ASSERT_TRUE(reduced.has_value());
  EXPECT_EQ((*reduced)->num_rows(), 0);
  EXPECT_EQ((*reduced)->num_columns(), 1 + static_cast<int>(Aggregates().size()));
  ASSERT_OK_AND_ASSIGN(auto unknown, GlobalAggregate(*Input(), {{"hash_distinct", "s", "d"}}, kKey));
  EXPECT_FALSE(unknown.has_value());
}

}  // namespace
}  // namespace ketch
