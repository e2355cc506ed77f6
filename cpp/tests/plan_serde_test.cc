// Plan serialization: every node kind and expression kind round-trips with the same explain text
// (logical and physical) and the same results; bad bytes fail with a clear error, never a crash.
#include "ketch/distributed/serde/plan_serde.h"

#include <arrow/io/file.h>
#include <parquet/arrow/writer.h>
#include <parquet/metadata.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "ketch/exec/executor.h"
#include "ketch/plan/logical/aggregate_phases.h"
#include "ketch/plan/logical/plan_stats.h"
#include "ketch/plan/logical/scan_builder.h"
#include "ketch/plan/optimizer/optimizer.h"
#include "ketch/plan/physical/physical_plan.h"
#include "test_util.h"

namespace ketch {
namespace {

using serde::DeserializePlan;
using serde::SerializePlan;

std::shared_ptr<arrow::Schema> TestSchema() {
  return arrow::schema({arrow::field("k", arrow::int64()), arrow::field("s", arrow::utf8()),
                        arrow::field("x", arrow::float64()), arrow::field("l", arrow::list(arrow::int32()))});
}

std::shared_ptr<arrow::RecordBatch> TestBatch(int64_t offset, int64_t rows) {
  arrow::Int64Builder k;
  arrow::StringBuilder s;
  arrow::DoubleBuilder x;
  arrow::ListBuilder l(arrow::default_memory_pool(), std::make_shared<arrow::Int32Builder>());
  auto* items = static_cast<arrow::Int32Builder*>(l.value_builder());
  for (int64_t i = offset; i < offset + rows; ++i) {
    EXPECT_TRUE(k.Append(i % 7).ok());
    EXPECT_TRUE((i % 5 == 0 ? s.AppendNull() : s.Append("v" + std::to_string(i % 11))).ok());
    EXPECT_TRUE(x.Append(static_cast<double>(i) * 0.5).ok());
    EXPECT_TRUE(l.Append().ok());
    for (int j = 0; j < i % 3; ++j) EXPECT_TRUE(items->Append(static_cast<int32_t>(i + j)).ok());
  }
  std::shared_ptr<arrow::Array> ka, sa, xa, la;
  EXPECT_TRUE(k.Finish(&ka).ok());
  EXPECT_TRUE(s.Finish(&sa).ok());
  EXPECT_TRUE(x.Finish(&xa).ok());
  EXPECT_TRUE(l.Finish(&la).ok());
  return arrow::RecordBatch::Make(TestSchema(), rows, {ka, sa, xa, la});
}

LogicalPlanPtr Source(int64_t offset = 0) {
  return LogicalPlan::InMemory(
             TestSchema(), {TestBatch(offset, 40), TestBatch(offset + 40, 25), TestBatch(0, 0)}, {0, 1, 2})
      .ValueOrDie();
}

ExprPtr Col(const std::string& name) { return Expr::Column(name); }
ExprPtr Lit(int64_t v) { return Expr::Literal(std::make_shared<arrow::Int64Scalar>(v)); }
ExprPtr Call(const std::string& f, std::vector<ExprPtr> args, FunctionOptions options = {}) {
  return Expr::Call(f, std::move(args), std::move(options));
}

std::shared_ptr<arrow::Table> RunPlan(const LogicalPlanPtr& plan) {
  auto physical = TranslateToPhysical(plan, ExecutionConfig{}.Resolved());
  EXPECT_TRUE(physical.ok()) << physical.status().ToString();
  auto out = ExecutePlan(*physical, ExecutionConfig{});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  auto table = arrow::Table::FromRecordBatches(plan->schema(), *out);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  return table.ValueOrDie();
}

// Serializes, deserializes and checks explain texts (logical and physical) and the results.
LogicalPlanPtr RoundTrip(const LogicalPlanPtr& plan, bool run = true,
                         const serde::UdfPayloadWriter& writer = {},
                         const serde::UdfPayloadReader& reader = {}) {
  auto bytes = SerializePlan(plan, writer);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto back = DeserializePlan(**bytes, reader);
  EXPECT_TRUE(back.ok()) << back.status().ToString();
  if (!back.ok()) return nullptr;
  const auto& copy = *back;
  EXPECT_EQ(copy->ToString(), plan->ToString());
  EXPECT_TRUE(copy->schema()->Equals(*plan->schema(), /*check_metadata=*/true));
  const auto config = ExecutionConfig{}.Resolved();
  EXPECT_EQ(PlanToStringWithStats(*copy), PlanToStringWithStats(*plan));
  for (bool with_stats : {false, true}) {
    EXPECT_EQ(TranslateToPhysical(copy, config).ValueOrDie()->ToString(with_stats),
              TranslateToPhysical(plan, config).ValueOrDie()->ToString(with_stats));
  }
  // Serializing the copy gives the same bytes: nothing was lost or reordered.
  auto again = SerializePlan(copy, writer);
  EXPECT_TRUE(again.ok());
  if (again.ok() && !writer) EXPECT_TRUE((*again)->Equals(**bytes));
  if (run) {
    auto expected = RunPlan(plan);
    auto actual = RunPlan(copy);
    EXPECT_TRUE(actual->Equals(*expected)) << "expected\n"
                                           << expected->ToString() << "\ngot\n"
                                           << actual->ToString();
  }
  return copy;
}

TEST(PlanSerde, ExpressionsOfEveryKind) {
  FunctionOptions options = {{"pattern", std::make_shared<arrow::LargeStringScalar>("v1")},
                             {"unused", nullptr}};
  std::vector<ExprPtr> exprs = {
      Col("k"),
      Expr::Alias(Call("add", {Col("k"), Lit(3)}), "k3"),
      Expr::Alias(Expr::Cast(Col("k"), arrow::int32()), "ki"),
      Expr::Alias(Call("utf8_upper", {Col("s")}, {{"pattern", std::make_shared<arrow::StringScalar>("v1")}}),
                  "up"),
      Expr::Alias(Expr::Literal(std::make_shared<arrow::TimestampScalar>(
                      1700000000000000, arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"))),
                  "ts"),
      Expr::Alias(Expr::Literal(std::make_shared<arrow::NullScalar>()), "nothing"),
      Expr::Alias(Expr::Literal(arrow::MakeNullScalar(arrow::utf8())), "null_str"),
      Expr::Alias(Expr::Literal(std::make_shared<arrow::Decimal128Scalar>(arrow::Decimal128(12345),
                                                                          arrow::decimal128(10, 2))),
                  "dec"),
      Expr::Alias(Expr::Literal(std::make_shared<arrow::LargeBinaryScalar>(std::string("\0\1\2", 3))), "bin"),
      Expr::Alias(Expr::Literal(std::make_shared<arrow::BooleanScalar>(true)), "t"),
      Expr::Alias(Expr::Literal(std::make_shared<arrow::Date32Scalar>(19000)), "d"),
  };
  auto plan = LogicalPlan::Project(Source(), exprs).ValueOrDie();
  auto copy = RoundTrip(plan);
  ASSERT_NE(copy, nullptr);
  // Options survive, a null option included (printed, and kept as null).
  auto with_options =
      LogicalPlan::Project(Source(), {Expr::Alias(Call("utf8_length", {Col("s")}, options), "n")});
  ASSERT_TRUE(with_options.ok()) << with_options.status().ToString();
  auto bytes = SerializePlan(*with_options, {}).ValueOrDie();
  auto back = DeserializePlan(*bytes, {}).ValueOrDie();
  const auto& back_options = back->exprs()[0]->children()[0]->options();
  ASSERT_EQ(back_options.size(), 2u);
  EXPECT_EQ(back_options.at("unused"), nullptr);
  EXPECT_TRUE(back_options.at("pattern")->Equals(*options.at("pattern")));
}

TEST(PlanSerde, DeeplyNestedExpressionsRoundTrip) {
  ExprPtr sum = Col("k");
  for (int i = 0; i < 1000; ++i) sum = Call("add", {sum, Lit(1)});
  auto plan = LogicalPlan::Project(Source(), {Expr::Alias(sum, "deep")}).ValueOrDie();
  RoundTrip(plan);
}

TEST(PlanSerde, EveryNodeKindOverInMemoryData) {
  auto source = Source();
  auto other = Source(100);
  std::vector<LogicalPlanPtr> plans;
  plans.push_back(source);
  plans.push_back(LogicalPlan::Filter(source, Call("greater", {Col("k"), Lit(2)})).ValueOrDie());
  plans.push_back(LogicalPlan::Limit(source, 17).ValueOrDie());
  plans.push_back(
      LogicalPlan::Sort(source, SortSpec{{Col("k"), Col("x")}, {true, false}, {false, true}}).ValueOrDie());
  // Hash aggregation's output order is not defined: sorted by the key.
  auto aggregate =
      LogicalPlan::Aggregate(
          source,
          AggregateSpec{{"k"},
                        {Expr::Alias(Call("agg_sum", {Col("x")}), "sx"),
                         Expr::Alias(Call("agg_count", {Col("s")},
                                          {{"mode", std::make_shared<arrow::StringScalar>("all")}}),
                                     "n"),
                         Expr::Alias(Call("agg_sum", {Call("multiply", {Col("x"), Lit(2)})}), "computed")}})
          .ValueOrDie();
  plans.push_back(LogicalPlan::Sort(aggregate, SortSpec{{Col("k")}, {false}, {false}}).ValueOrDie());
  for (const char* how : {"inner", "left", "right", "outer", "semi", "anti"}) {
    JoinSpec spec{{"k"}, {"k"}, ParseJoinType(how).ValueOrDie(), "r_", "_x"};
    auto right =
        LogicalPlan::Aggregate(other, AggregateSpec{{"k"}, {Expr::Alias(Call("agg_max", {Col("x")}), "mx")}})
            .ValueOrDie();
    auto join = LogicalPlan::Join(source, right, spec).ValueOrDie();
    plans.push_back(LogicalPlan::Sort(join, SortSpec{{Col("x")}, {false}, {false}}).ValueOrDie());
  }
  // A cross join (no keys) and a join with a strategy (both kept through the round trip).
  auto few = LogicalPlan::Limit(other, 5).ValueOrDie();
  auto cross = LogicalPlan::Join(LogicalPlan::Limit(source, 7).ValueOrDie(), few,
                                 JoinSpec{{}, {}, JoinType::kCross, "r_", "", ""})
                   .ValueOrDie();
  plans.push_back(LogicalPlan::Sort(cross, SortSpec{{Col("x"), Col("r_x")}, {false, false}, {false, false}})
                      .ValueOrDie());
  auto broadcast =
      LogicalPlan::Join(source, few, JoinSpec{{"k"}, {"k"}, JoinType::kInner, "r_", "", "broadcast"})
          .ValueOrDie();
  plans.push_back(
      LogicalPlan::Sort(broadcast, SortSpec{{Col("x"), Col("r_x")}, {false, false}, {false, false}})
          .ValueOrDie());
  plans.push_back(LogicalPlan::Explode(source, {"l"}).ValueOrDie());
  plans.push_back(LogicalPlan::Concat(source, other).ValueOrDie());
  plans.push_back(LogicalPlan::Sample(source, SampleSpec{0.5, false, 42}).ValueOrDie());
  plans.push_back(LogicalPlan::Sample(source, SampleSpec{1.5, true, 7}).ValueOrDie());
  plans.push_back(LogicalPlan::Repartition(source, PartitionSpec{3, {"k"}, 0}).ValueOrDie());
  // Random partitioning is not seeded: compare its rows sorted.
  plans.push_back(LogicalPlan::Sort(LogicalPlan::Repartition(source, PartitionSpec{-1, {}, 0}).ValueOrDie(),
                                    SortSpec{{Col("x")}, {false}, {false}})
                      .ValueOrDie());
  plans.push_back(LogicalPlan::IntoPartitions(source, 4).ValueOrDie());
  plans.push_back(LogicalPlan::IntoBatches(source, 9).ValueOrDie());
  // A node reached twice (self-join) is sent once and stays shared.
  auto self =
      LogicalPlan::Join(source, source, JoinSpec{{"k"}, {"k"}, JoinType::kInner, "right.", ""}).ValueOrDie();
  plans.push_back(
      LogicalPlan::Sort(self, SortSpec{{Col("x"), Col("right.x")}, {false, false}, {false, false}})
          .ValueOrDie());
  for (const auto& plan : plans) {
    SCOPED_TRACE(plan->ToString());
    // Sampling is seeded: its results compare exactly after a round trip.
    auto copy = RoundTrip(plan);
    if (plan == plans.back() && copy) {
      const auto& join = copy->inputs()[0];
      EXPECT_EQ(join->inputs()[0].get(), join->inputs()[1].get());
    }
  }
}

TEST(PlanSerde, WriteParquetAndParquetScanWithPushdownsAndTasks) {
  const auto dir = std::filesystem::temp_directory_path() / ("ketch_serde_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // Two hive partitions, each file with several row groups.
  std::vector<ScanFile> files;
  for (int part = 0; part < 2; ++part) {
    const auto sub = dir / ("p=" + std::to_string(part));
    std::filesystem::create_directories(sub);
    const std::string path = (sub / "data.parquet").string();
    auto table = arrow::Table::FromRecordBatches({TestBatch(part * 1000, 900)}).ValueOrDie();
    auto out = arrow::io::FileOutputStream::Open(path).ValueOrDie();
    ASSERT_OK(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), out, 100));
    ASSERT_OK(out->Close());
    ScanFile file{path,
                  static_cast<int64_t>(std::filesystem::file_size(path)),
                  {std::make_shared<arrow::Int64Scalar>(part)}};
    files.push_back(file);
  }
  ScanRequest request;
  request.files = files;
  request.partition_schema = arrow::schema({arrow::field("p", arrow::int64())});
  request.s3.region = "eu-west-1";
  request.s3.key_id = "AKIDSECRETKEYID";
  request.s3.access_key = "SECRETACCESSKEY";
  ScanInfo info = BuildScan(request).ValueOrDie();
  auto scan = LogicalPlan::Scan(info).ValueOrDie();
  auto filtered = LogicalPlan::Filter(scan, Call("less", {Col("k"), Lit(5)})).ValueOrDie();
  auto projected =
      LogicalPlan::Project(filtered, {Col("k"), Col("p"), Expr::Alias(Call("add", {Col("x"), Lit(1)}), "x1")})
          .ValueOrDie();
  auto limited = LogicalPlan::Limit(LogicalPlan::Scan(info).ValueOrDie(), 250).ValueOrDie();
  // Small scan tasks: several per file, so the deserialized scan decodes tasks in parallel
  // without the footers the optimizer read.
  Optimizer optimizer({}, 10, ScanTaskSizing{1, 2000, 4});
  for (const auto& plan : {projected, limited, scan}) {
    auto optimized = optimizer.Optimize(plan).ValueOrDie();
    ASSERT_EQ(optimized->ToString().find("Scan tasks = 1 ("), std::string::npos) << optimized->ToString();
    SCOPED_TRACE(optimized->ToString());
    auto copy = RoundTrip(optimized);
    // Not yet optimized plans round-trip too.
    RoundTrip(plan);
    if (!copy) continue;
    const LogicalPlan* node = copy.get();
    while (node->kind() != LogicalKind::kScan) node = node->inputs()[0].get();
    EXPECT_EQ(node->scan().s3.access_key, "SECRETACCESSKEY");  // the worker needs the credentials
    // The footers the optimizer read travel along: the worker reads none again.
    const LogicalPlan* original = optimized.get();
    while (original->kind() != LogicalKind::kScan) original = original->inputs()[0].get();
    const auto& sent = original->scan().tasks->metadata;
    const auto& received = node->scan().tasks->metadata;
    ASSERT_EQ(received.size(), sent.size());
    for (size_t f = 0; f < sent.size(); ++f) {
      ASSERT_EQ(received[f] != nullptr, sent[f] != nullptr);
      if (sent[f]) EXPECT_TRUE(received[f]->Equals(*sent[f]));
    }
  }
  // Scan tasks without footers (a plan whose footers were not sent): the scan reads them when it
  // opens each file, decoding whole tasks side by side, and gives the same rows in the same order.
  auto optimized = optimizer.Optimize(scan).ValueOrDie();
  ScanInfo stripped = optimized->scan();
  auto tasks = std::make_shared<ScanTasks>(*stripped.tasks);
  tasks->metadata.clear();
  stripped.tasks = tasks;
  stripped.footers = nullptr;
  auto without_footers = LogicalPlan::Scan(stripped).ValueOrDie();
  auto expected = RunPlan(optimized);
  EXPECT_TRUE(RunPlan(without_footers)->Equals(*expected));
  // One scan task alone (how a task runs on another worker): only its file's footer travels.
  ScanInfo only = optimized->scan();
  ASSERT_GE(only.tasks->num_tasks(), 2);
  const int64_t last = only.tasks->num_tasks() - 1;
  only.tasks = std::make_shared<ScanTasks>(optimized->scan().tasks->OnlyTask(last));
  auto single = LogicalPlan::Scan(only).ValueOrDie();
  auto single_copy = RoundTrip(single);
  ASSERT_NE(single_copy, nullptr);
  const int32_t last_file = only.tasks->tasks.back().file;
  const auto& single_metadata = single_copy->scan().tasks->metadata;
  for (size_t f = 0; f < single_metadata.size(); ++f) {
    EXPECT_EQ(single_metadata[f] != nullptr, static_cast<int32_t>(f) == last_file) << f;
  }
  auto copy_without = RoundTrip(without_footers);
  ASSERT_NE(copy_without, nullptr);
  EXPECT_TRUE(copy_without->scan().tasks->metadata.empty());
  EXPECT_TRUE(RunPlan(copy_without)->Equals(*expected));
  // Writes: same files written by the original and the copy (to two directories).
  auto write_a =
      LogicalPlan::Write(Source(), WriteInfo{.root_dir = (dir / "out_a").string(), .compression = "zstd"})
          .ValueOrDie();
  auto write_copy = RoundTrip(write_a, /*run=*/false);
  ASSERT_NE(write_copy, nullptr);
  EXPECT_EQ(write_copy->write().compression, "zstd");
  EXPECT_EQ(write_copy->write().root_dir, (dir / "out_a").string());
  std::filesystem::remove_all(dir);
}

TEST(PlanSerde, CsvScanOptionsRoundTrip) {
  const auto dir = std::filesystem::temp_directory_path() / ("ketch_serde_csv_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "a.csv").string();
  {
    auto out = arrow::io::FileOutputStream::Open(path).ValueOrDie();
    const std::string text = "a;b\n1;'x;y'\n2;z\n";
    ASSERT_OK(out->Write(text.data(), static_cast<int64_t>(text.size())));
    ASSERT_OK(out->Close());
  }
  ScanRequest request;
  request.format = FileFormat::kCsv;
  request.files = {ScanFile{path, -1, {}}};
  request.csv.delimiter = ';';
  request.csv.quote = '\'';
  request.csv.allow_variable_columns = true;
  auto scan = LogicalPlan::Scan(BuildScan(request).ValueOrDie()).ValueOrDie();
  auto optimized = Optimizer().Optimize(scan).ValueOrDie();
  auto copy = RoundTrip(optimized);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->scan().csv.delimiter, ';');
  EXPECT_EQ(copy->scan().csv.quote, '\'');
  EXPECT_TRUE(copy->scan().csv.allow_variable_columns);
  std::filesystem::remove_all(dir);
}

TEST(PlanSerde, VideoScanOptionsRoundTrip) {
  // No file is opened before the query runs, so the paths need not exist (run = false).
  ScanRequest request;
  request.format = FileFormat::kVideo;
  request.files = {ScanFile{"/videos/a.mp4", 1000, {}}, ScanFile{"s3://bucket/b.webm", 2000, {}}};
  request.video.image_height = 48;
  request.video.image_width = 64;
  request.video.is_key_frame = false;
  request.video.start_time = 1.5;
  request.video.end_time = 9.25;
  request.video.sample_interval_seconds = 0.5;
  auto scan = LogicalPlan::Scan(BuildScan(request).ValueOrDie()).ValueOrDie();
  auto limited = LogicalPlan::Limit(scan, 7).ValueOrDie();
  auto projected = LogicalPlan::Project(limited, {Col("path"), Col("frame_index")}).ValueOrDie();
  auto optimized = Optimizer().Optimize(projected).ValueOrDie();
  const std::string text = optimized->ToString();
  EXPECT_NE(text.find("ScanVideo"), std::string::npos) << text;
  EXPECT_NE(text.find("Frames = non-key frames only, from 1.5 s (seek) to 9.25 s, one every 0.5 s"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(data not read: no RGB conversion)"), std::string::npos) << text;
  EXPECT_NE(text.find("Limit pushdown = 7"), std::string::npos) << text;
  EXPECT_NE(text.find("Scan tasks = 2 (2 tasks from 2 files"), std::string::npos) << text;
  auto copy = RoundTrip(optimized, /*run=*/false);
  ASSERT_NE(copy, nullptr);
  const LogicalPlan* node = copy.get();
  while (node->kind() != LogicalKind::kScan) node = node->inputs()[0].get();
  const VideoScanOptions& video = node->scan().video;
  EXPECT_EQ(node->scan().format, FileFormat::kVideo);
  EXPECT_EQ(video.image_height, 48);
  EXPECT_EQ(video.image_width, 64);
  EXPECT_EQ(video.is_key_frame, std::optional<bool>(false));
  EXPECT_EQ(video.start_time, 1.5);
  EXPECT_EQ(video.end_time, std::optional<double>(9.25));
  EXPECT_EQ(video.sample_interval_seconds, std::optional<double>(0.5));
  EXPECT_EQ(node->scan().tasks->num_tasks(), 2);
  // Bad options are refused when the scan is built, naming read_video_frames.
  request.video.image_width = 0;
  auto bad = BuildScan(request);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("read_video_frames: image_height and image_width"), std::string::npos)
      << bad.status().ToString();
}

// A C++ UDF (doubles its int64 argument); the payload is its factor.
class TimesUdf : public BatchUdf {
 public:
  explicit TimesUdf(int64_t factor) : factor_(factor) {}
  std::string name() const override { return "times"; }
  int64_t factor() const { return factor_; }
  arrow::Result<std::shared_ptr<arrow::Array>> Call(const std::vector<std::shared_ptr<arrow::Array>>& args,
                                                    int64_t num_rows, const UdfCall&) override {
    ARROW_ASSIGN_OR_RAISE(auto out, arrow::compute::Multiply(args[0], arrow::Datum(factor_)));
    return out.make_array();
  }

 private:
  int64_t factor_;
};

TEST(PlanSerde, UdfPayloadsGoThroughTheCallersWriterAndReader) {
  UdfProperties props;
  props.batch_size = 16;
  props.default_batch_rows = 512;
  props.concurrency = 2;
  props.is_class = true;
  props.max_items_per_row = 5;
  props.bucket_key_args = 1;  // the run below also sorts and restores the rows
  props.display = {{"use_process", "false"}, {"num_gpus", "0.0"}};
  auto udf = Expr::Udf(std::make_shared<TimesUdf>(3), {Col("k")}, arrow::int64(), props);
  auto plan = LogicalPlan::Project(Source(), {Col("k"), Expr::Alias(udf, "k3")}).ValueOrDie();
  serde::UdfPayloadWriter writer = [](const Expr& e) -> arrow::Result<std::string> {
    return std::to_string(static_cast<const TimesUdf&>(*e.udf()).factor());
  };
  UdfProperties seen;
  serde::UdfPayloadReader reader =
      [&](const std::string& name, const std::string& payload,
          const UdfProperties& properties) -> arrow::Result<std::shared_ptr<BatchUdf>> {
    EXPECT_EQ(name, "times");
    seen = properties;
    return std::make_shared<TimesUdf>(std::stoll(payload));
  };
  auto copy = RoundTrip(plan, /*run=*/true, writer, reader);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(seen.batch_size, 16);
  EXPECT_EQ(seen.default_batch_rows, 512);
  EXPECT_EQ(seen.concurrency, 2);
  EXPECT_TRUE(seen.is_class);
  EXPECT_FALSE(seen.generator);
  EXPECT_EQ(seen.max_items_per_row, 5);
  EXPECT_EQ(seen.bucket_key_args, 1);
  EXPECT_EQ(seen.display, props.display);
  // Without a writer (or reader) a plan with a UDF fails, naming it.
  auto no_writer = SerializePlan(plan, {});
  ASSERT_FALSE(no_writer.ok());
  EXPECT_NE(no_writer.status().message().find("times"), std::string::npos);
  auto bytes = SerializePlan(plan, writer).ValueOrDie();
  auto no_reader = DeserializePlan(*bytes, {});
  ASSERT_FALSE(no_reader.ok());
  EXPECT_NE(no_reader.status().message().find("times"), std::string::npos);
  // A failing writer's error names the UDF.
  auto failing = SerializePlan(plan, [](const Expr&) -> arrow::Result<std::string> {
    return arrow::Status::TypeError("cannot pickle a lock");
  });
  ASSERT_FALSE(failing.ok());
  EXPECT_TRUE(failing.status().IsTypeError());
  EXPECT_NE(failing.status().message().find("cannot serialize UDF 'times': cannot pickle a lock"),
            std::string::npos);
}

TEST(PlanSerde, OtherFormatVersionFailsNamingBothVersions) {
  auto bytes = SerializePlan(Source(), {}).ValueOrDie();
  auto copy = arrow::AllocateBuffer(bytes->size()).ValueOrDie();
  std::memcpy(copy->mutable_data(), bytes->data(), bytes->size());
  copy->mutable_data()[4] = 99;  // version 99
  auto result = DeserializePlan(*copy, {});
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(result.status().IsInvalid());
  EXPECT_NE(result.status().message().find("format version 99"), std::string::npos)
      << result.status().ToString();
  EXPECT_NE(result.status().message().find("reads version " + std::to_string(serde::kPlanFormatVersion)),
            std::string::npos)
      << result.status().ToString();
}

TEST(PlanSerde, CorruptOrForeignBytesFailCleanly) {
  auto plan =
      LogicalPlan::Sort(LogicalPlan::Filter(Source(), Call("greater", {Col("k"), Lit(2)})).ValueOrDie(),
                        SortSpec{{Col("x")}, {true}, {true}})
          .ValueOrDie();
  auto bytes = SerializePlan(plan, {}).ValueOrDie();
  // Not plan bytes at all.
  for (const std::string text : {std::string(), std::string("KTP"), std::string("hello world, not a plan")}) {
    auto result = DeserializePlan(arrow::Buffer(text), {});
    ASSERT_FALSE(result.ok());
    EXPECT_TRUE(result.status().IsInvalid());
    EXPECT_NE(result.status().message().find("not a serialized Ketch plan"), std::string::npos);
  }
  // Every truncation fails (the verifier sees the missing bytes).
  for (int64_t n = 8; n < bytes->size(); n += std::max<int64_t>(1, bytes->size() / 200)) {
    auto result = DeserializePlan(*arrow::SliceBuffer(bytes, 0, n), {});
    ASSERT_FALSE(result.ok()) << n;
    EXPECT_TRUE(result.status().IsInvalid()) << result.status().ToString();
    EXPECT_NE(result.status().message().find("corrupt plan bytes"), std::string::npos)
        << result.status().ToString();
  }
  // Random damage: an error or a (different but valid) plan, never a crash.
  std::mt19937 rng(1234);
  int failed = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    auto damaged = arrow::AllocateBuffer(bytes->size()).ValueOrDie();
    std::memcpy(damaged->mutable_data(), bytes->data(), bytes->size());
    for (int i = 0; i < 1 + trial % 4; ++i) {
      const size_t at = 8 + rng() % (bytes->size() - 8);
      damaged->mutable_data()[at] = static_cast<uint8_t>(rng());
    }
    auto result = DeserializePlan(*damaged, {});
    if (!result.ok()) {
      ++failed;
    } else {
      (void)(*result)->ToString();
    }
  }
  EXPECT_GT(failed, 0);
}

TEST(PlanSerde, AggregatePhasesRoundTripWithTheirSourceSchema) {
  auto source = Source();
  auto full = LogicalPlan::Aggregate(source, AggregateSpec{{"k"},
                                                           {Expr::Alias(Call("agg_sum", {Col("x")}), "sx"),
                                                            Expr::Alias(Call("agg_mean", {Col("k")}), "mk"),
                                                            Expr::Alias(Call("agg_max", {Col("s")}), "ms")}})
                  .ValueOrDie();
  auto split = SplitAggregate(full).ValueOrDie();
  ASSERT_TRUE(split.has_value());
  // Output order of a hash aggregate is not defined: sorted by the key.
  auto partial_copy =
      RoundTrip(LogicalPlan::Sort(split->partial, SortSpec{{Col("k")}, {false}, {false}}).ValueOrDie());
  ASSERT_NE(partial_copy, nullptr);
  EXPECT_EQ(partial_copy->inputs()[0]->aggregate().phase, AggregatePhase::kPartial);
  // The final phase, over its empty placeholder (explain, stats and result compared) ...
  auto final_copy =
      RoundTrip(LogicalPlan::Sort(split->final, SortSpec{{Col("k")}, {false}, {false}}).ValueOrDie());
  ASSERT_NE(final_copy, nullptr);
  const auto& spec = final_copy->inputs()[0]->aggregate();
  EXPECT_EQ(spec.phase, AggregatePhase::kFinal);
  ASSERT_NE(spec.source_schema, nullptr);
  EXPECT_TRUE(spec.source_schema->Equals(*TestSchema()));
  // ... and the copy over real partial states gives the full aggregate's result.
  auto states = RunPlan(split->partial);
  auto states_source =
      LogicalPlan::InMemory(states->schema(), {states->CombineChunksToBatch().ValueOrDie()}).ValueOrDie();
  auto final = final_copy->inputs()[0]->WithInputs({states_source}).ValueOrDie();
  EXPECT_TRUE(
      RunPlan(LogicalPlan::Sort(final, SortSpec{{Col("k")}, {false}, {false}}).ValueOrDie())
          ->Equals(*RunPlan(LogicalPlan::Sort(full, SortSpec{{Col("k")}, {false}, {false}}).ValueOrDie())));
}

}  // namespace
}  // namespace ketch
