// ComputeWindow over a small table with two partitions, ties, a null order key and null values:
// ranks, running (peer-inclusive) sums, row and range frames, sliding min, lag with a default.
#include "ketch/exec/blocking/window_compute.h"

#include <arrow/json/from_string.h>

#include "test_util.h"

namespace ketch {
namespace {

std::shared_ptr<arrow::Table> Input() {
  auto schema = arrow::schema({arrow::field("g", arrow::utf8()), arrow::field("t", arrow::int64()),
                               arrow::field("v", arrow::int64()), arrow::field("d", arrow::int64())});
  auto col = [](const std::shared_ptr<arrow::DataType>& type, const std::string& json) {
    return arrow::json::ArrayFromJSONString(type, json).ValueOrDie();
  };
  // Partition a: t 1, 2, 2, 4 (a tie); partition b: t 5, null.
  return arrow::Table::Make(
      schema, {arrow::ChunkedArray::Make({col(arrow::utf8(), R"(["a","b","a","a","b","a"])")}).ValueOrDie(),
               arrow::ChunkedArray::Make({col(arrow::int64(), "[2, 5, 1, 4, null, 2]")}).ValueOrDie(),
               arrow::ChunkedArray::Make({col(arrow::int64(), "[10, 7, 1, null, 3, 20]")}).ValueOrDie(),
               arrow::ChunkedArray::Make({col(arrow::int64(), "[0, 0, 0, 0, 0, 0]")}).ValueOrDie()});
}

WindowFunction Fn(const std::string& name, const std::string& input, const std::string& output,
                  std::shared_ptr<arrow::DataType> type) {
  WindowFunction f;
  f.function = name;
  f.input = input;
  f.output = output;
  f.input_type = arrow::int64();
  f.output_type = std::move(type);
  return f;
}

std::vector<std::string> Column(const arrow::Table& table, const std::string& name) {
  std::vector<std::string> out;
  auto column = table.GetColumnByName(name);
  for (const auto& chunk : column->chunks()) {
    for (int64_t i = 0; i < chunk->length(); ++i) {
      out.push_back(chunk->IsNull(i) ? "null" : chunk->GetScalar(i).ValueOrDie()->ToString());
    }
  }
  return out;
}

arrow::Result<std::shared_ptr<arrow::Table>> ComputeFor(const WindowSpec& spec,
                                                        std::vector<WindowFunction> functions) {
  auto input = Input();
  auto fields = input->schema()->fields();
  for (const auto& f : functions) fields.push_back(arrow::field(f.output, f.output_type));
  return ComputeWindow(spec, functions, input, arrow::schema(fields));
}

WindowSpec Ordered() {
  WindowSpec spec;
  spec.partition_by = {"g"};
  spec.order_by = {"t"};
  spec.descending = {false};
  spec.nulls_first = {false};
  return spec;
}

TEST(WindowCompute, RanksIncludePeersAndAFramelessSumIsThePartitions) {
  ASSERT_OK_AND_ASSIGN(auto out, ComputeFor(Ordered(), {Fn("rank", "", "rk", arrow::uint64()),
                                                        Fn("dense_rank", "", "drk", arrow::uint64()),
                                                        Fn("agg_sum", "v", "total", arrow::int64())}));
  // Sorted: a(1,1) a(2,10) a(2,20) a(4,null) b(5,7) b(null,3)
  EXPECT_EQ(Column(*out, "t"), (std::vector<std::string>{"1", "2", "2", "4", "5", "null"}));
  EXPECT_EQ(Column(*out, "rk"), (std::vector<std::string>{"1", "2", "2", "4", "1", "2"}));
  EXPECT_EQ(Column(*out, "drk"), (std::vector<std::string>{"1", "2", "2", "3", "1", "2"}));
  // No frame: the whole partition, order_by or not (Daft's rule).
  EXPECT_EQ(Column(*out, "total"), (std::vector<std::string>{"31", "31", "31", "31", "10", "10"}));
}

TEST(WindowCompute, RunningSumOverARangeFrameIncludesPeers) {
  WindowSpec running = Ordered();
  running.frame.type = WindowFrame::Type::kRange;
  running.frame.start_unbounded = true;
  running.frame.end_unbounded = false;
  running.frame.end = 0;
  ASSERT_OK_AND_ASSIGN(auto out, ComputeFor(running, {Fn("agg_sum", "v", "run", arrow::int64())}));
  EXPECT_EQ(Column(*out, "run"), (std::vector<std::string>{"1", "31", "31", "31", "7", "10"}));
}

TEST(WindowCompute, RowAndRangeFramesAndSlidingMin) {
  WindowSpec rows = Ordered();
  rows.frame.type = WindowFrame::Type::kRows;
  rows.frame.start_unbounded = rows.frame.end_unbounded = false;
  rows.frame.start = -1;
  rows.frame.end = 0;
  ASSERT_OK_AND_ASSIGN(auto out, ComputeFor(rows, {Fn("agg_sum", "v", "s", arrow::int64()),
                                                   Fn("agg_min", "v", "m", arrow::int64())}));
  EXPECT_EQ(Column(*out, "s"), (std::vector<std::string>{"1", "11", "30", "20", "7", "10"}));
  EXPECT_EQ(Column(*out, "m"), (std::vector<std::string>{"1", "1", "10", "20", "7", "3"}));

  WindowSpec range = Ordered();
  range.frame.type = WindowFrame::Type::kRange;
  range.frame.start_unbounded = range.frame.end_unbounded = false;
  range.frame.start = -1;
  range.frame.end = 0;
  ASSERT_OK_AND_ASSIGN(out, ComputeFor(range, {Fn("agg_count", "v", "c", arrow::uint64())}));
  // t=1: {1}; t=2: {1,2,2}; t=4: {4} (v null: 0 valid); b t=5: {5}; null t: its null peers
  EXPECT_EQ(Column(*out, "c"), (std::vector<std::string>{"1", "3", "3", "0", "1", "1"}));
}

TEST(WindowCompute, LagWithDefaultColumn) {
  auto lag = Fn("lag", "v", "p", arrow::int64());
  lag.offset = 1;
  lag.default_input = "d";
  ASSERT_OK_AND_ASSIGN(auto out, ComputeFor(Ordered(), {lag}));
  EXPECT_EQ(Column(*out, "p"), (std::vector<std::string>{"0", "1", "10", "20", "0", "7"}));
}

}  // namespace
}  // namespace ketch
