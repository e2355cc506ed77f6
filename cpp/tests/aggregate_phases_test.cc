// Two-phase aggregation across partitions: a partial aggregate per chunk of the input, then one
// final aggregate over every chunk's partial states, gives the full aggregate's result (random
// data, null keys and values, spilling partial and final sinks, global aggregates, empty input).
#include "ketch/plan/logical/aggregate_phases.h"

#include <algorithm>
#include <random>

#include "ketch/exec/executor.h"
#include "ketch/plan/physical/physical_plan.h"
#include "test_util.h"

namespace ketch {
namespace {

::testing::Environment* const env = ::testing::AddGlobalTestEnvironment(new testing::Environment);

ExprPtr Agg(const std::string& f, const std::string& column, const std::string& alias,
            FunctionOptions options = {}) {
  return Expr::Alias(Expr::Call(f, {Expr::Column(column)}, std::move(options)), alias);
}

std::shared_ptr<arrow::Schema> Schema() {
  return arrow::schema({arrow::field("k", arrow::int64()), arrow::field("v", arrow::int64()),
                        arrow::field("f", arrow::float64()), arrow::field("s", arrow::utf8())});
}

// `rows` random rows: keys in [0, groups) (5% null), values with 10% nulls.
std::shared_ptr<arrow::RecordBatch> RandomBatch(int64_t rows, int64_t groups, uint32_t seed) {
  std::mt19937 rng(seed);
  arrow::Int64Builder k, v;
  arrow::DoubleBuilder f;
  arrow::StringBuilder s;
  for (int64_t i = 0; i < rows; ++i) {
    EXPECT_TRUE((rng() % 20 == 0 ? k.AppendNull() : k.Append(static_cast<int64_t>(rng() % groups))).ok());
    EXPECT_TRUE(
        (rng() % 10 == 0 ? v.AppendNull() : v.Append(static_cast<int64_t>(rng() % 2001) - 1000)).ok());
    // Multiples of 1/4: float sums are exact in any order.
    EXPECT_TRUE((rng() % 10 == 0 ? f.AppendNull() : f.Append(static_cast<double>(rng() % 400) / 4.0)).ok());
    EXPECT_TRUE((rng() % 7 == 0 ? s.AppendNull() : s.Append("w" + std::to_string(rng() % 50))).ok());
  }
  std::shared_ptr<arrow::Array> ka, va, fa, sa;
  EXPECT_TRUE(k.Finish(&ka).ok());
  EXPECT_TRUE(v.Finish(&va).ok());
  EXPECT_TRUE(f.Finish(&fa).ok());
  EXPECT_TRUE(s.Finish(&sa).ok());
  return arrow::RecordBatch::Make(Schema(), rows, {ka, va, fa, sa});
}

arrow::Result<std::shared_ptr<arrow::Table>> Run(const LogicalPlanPtr& plan, const ExecutionConfig& config) {
  ARROW_ASSIGN_OR_RAISE(auto physical, TranslateToPhysical(plan, config.Resolved()));
  ARROW_ASSIGN_OR_RAISE(auto batches, ExecutePlan(physical, config));
  return arrow::Table::FromRecordBatches(plan->schema(), batches);
}

// The table's rows sorted by every column (as text), for comparing unordered results.
std::vector<std::string> SortedRows(const std::shared_ptr<arrow::Table>& table) {
  std::vector<std::string> rows;
  auto batch = table->CombineChunksToBatch().ValueOrDie();
  for (int64_t r = 0; r < batch->num_rows(); ++r) {
    std::string row;
    for (int c = 0; c < batch->num_columns(); ++c)
      row += batch->column(c)->GetScalar(r).ValueOrDie()->ToString() + "|";
    rows.push_back(row);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<ExprPtr> MergeableAggregations() {
  return {
      Agg("agg_sum", "v", "sv"),
      Agg("agg_sum", "f", "sf"),
      Agg("agg_count", "v", "cv"),
      Agg("agg_count", "v", "call", {{"mode", std::make_shared<arrow::StringScalar>("all")}}),
      Agg("agg_count", "s", "cnull", {{"mode", std::make_shared<arrow::StringScalar>("null")}}),
      Agg("agg_mean", "f", "mf"),
      Agg("agg_min", "v", "minv"),
      Agg("agg_max", "s", "maxs"),
      Agg("agg_min", "s", "mins"),
      Agg("agg_any_value", "s", "anys", {{"ignore_nulls", std::make_shared<arrow::BooleanScalar>(true)}})};
}

// Partial over each of `chunks`, final over all the states; checks it equals the full aggregate.
void CheckTwoPhase(const std::vector<std::string>& keys,
                   const std::vector<std::shared_ptr<arrow::RecordBatch>>& chunks,
                   const ExecutionConfig& config, size_t* state_rows = nullptr) {
  auto all = LogicalPlan::InMemory(Schema(), chunks).ValueOrDie();
  auto full = LogicalPlan::Aggregate(all, AggregateSpec{keys, MergeableAggregations()}).ValueOrDie();
  auto split = SplitAggregate(full).ValueOrDie();
  ASSERT_TRUE(split.has_value());
  std::vector<std::shared_ptr<arrow::RecordBatch>> states;
  size_t rows = 0;
  for (const auto& chunk : chunks) {
    auto source = LogicalPlan::InMemory(Schema(), {chunk}).ValueOrDie();
    ASSERT_OK_AND_ASSIGN(auto partial, split->partial->WithInputs({source}));
    ASSERT_OK_AND_ASSIGN(auto table, Run(partial, config));
    ASSERT_TRUE(table->schema()->Equals(*split->partial->schema()));
    rows += table->num_rows();
    ASSERT_OK_AND_ASSIGN(auto batch, table->CombineChunksToBatch());
    states.push_back(batch);
  }
  if (state_rows) *state_rows = rows;
  ASSERT_OK_AND_ASSIGN(auto states_source, LogicalPlan::InMemory(split->partial->schema(), states));
  ASSERT_OK_AND_ASSIGN(auto final, split->final->WithInputs({states_source}));
  ASSERT_OK_AND_ASSIGN(auto actual, Run(final, config));
  ASSERT_OK_AND_ASSIGN(auto expected, Run(full, ExecutionConfig{}));
  ASSERT_TRUE(actual->schema()->Equals(*expected->schema()));
  EXPECT_EQ(SortedRows(actual), SortedRows(expected));
}

TEST(AggregatePhases, PartialPerChunkThenFinalEqualsFullOnRandomData) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::vector<std::shared_ptr<arrow::RecordBatch>> chunks;
    for (uint32_t c = 0; c < 5; ++c) chunks.push_back(RandomBatch(3000, 200, seed * 10 + c));
    size_t state_rows = 0;
    CheckTwoPhase({"k"}, chunks, ExecutionConfig{}, &state_rows);
    EXPECT_LE(state_rows, 5u * 201u);  // one row per group per chunk
    CheckTwoPhase({"k", "s"}, chunks, ExecutionConfig{});
  }
}

TEST(AggregatePhases, SmallMorselsAndSpillingSinksGiveTheSameResult) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> chunks;
  for (uint32_t c = 0; c < 3; ++c) chunks.push_back(RandomBatch(20000, 5000, 100 + c));
  ExecutionConfig config;
  config.morsel_size_rows = 1000;
  config.memory_budget_bytes = 64 << 10;  // the partial and final sinks spill
  CheckTwoPhase({"k", "s"}, chunks, config);
}

TEST(AggregatePhases, GlobalAggregateOneStateRowPerChunk) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> chunks;
  for (uint32_t c = 0; c < 4; ++c) chunks.push_back(RandomBatch(1000, 10, 50 + c));
  size_t state_rows = 0;
  CheckTwoPhase({}, chunks, ExecutionConfig{}, &state_rows);
  EXPECT_EQ(state_rows, 4u);
  CheckTwoPhase({}, {RandomBatch(0, 1, 1)}, ExecutionConfig{}, &state_rows);
  EXPECT_EQ(state_rows, 0u);
}

TEST(AggregatePhases, EmptyGroupedInput) { CheckTwoPhase({"k"}, {RandomBatch(0, 1, 1)}, ExecutionConfig{}); }

TEST(AggregatePhases, SinglePhaseAggregationsDoNotSplit) {
  auto source = LogicalPlan::InMemory(Schema(), {RandomBatch(10, 3, 1)}).ValueOrDie();
  for (const char* f : {"agg_list", "agg_concat", "agg_approx_count_distinct", "agg_stddev"}) {
    const std::string column = std::string(f) == "agg_concat" ? "s" : "v";
    auto full =
        LogicalPlan::Aggregate(source, AggregateSpec{{"k"}, {Agg("agg_sum", "v", "x"), Agg(f, column, "y")}})
            .ValueOrDie();
    EXPECT_FALSE(SplitAggregate(full).ValueOrDie().has_value()) << f;
    AggregateSpec partial{{"k"}, {Agg(f, column, "y")}};
    partial.phase = AggregatePhase::kPartial;
    EXPECT_FALSE(LogicalPlan::Aggregate(source, partial).ok()) << f;
  }
  EXPECT_FALSE(SplitAggregate(source).ValueOrDie().has_value());
}

TEST(AggregatePhases, ExplainNamesThePhase) {
  auto source = LogicalPlan::InMemory(Schema(), {RandomBatch(10, 3, 1)}).ValueOrDie();
  auto full = LogicalPlan::Aggregate(source, AggregateSpec{{"k"}, {Agg("agg_sum", "v", "x")}}).ValueOrDie();
  auto split = SplitAggregate(full).ValueOrDie();
  EXPECT_EQ(split->partial->Label(), "Aggregate (partial): agg_sum(col(v)) as x, Group by = k");
  EXPECT_EQ(split->final->Label(), "Aggregate (final): agg_sum(col(v)) as x, Group by = k");
  auto physical = TranslateToPhysical(split->final, ExecutionConfig{}.Resolved()).ValueOrDie();
  EXPECT_NE(physical->ToString(false).find("HashAggregate (final"), std::string::npos)
      << physical->ToString(false);
}

}  // namespace
}  // namespace ketch
