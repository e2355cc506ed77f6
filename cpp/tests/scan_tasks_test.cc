// Scan tasks: small files are merged into groups (at most max_sources files each), a large row group
// is split by row range below an expensive pipeline, and ScanSource tags every batch with its task
// (group), in task order, reading each row group once.
#include <arrow/io/file.h>
#include <arrow/util/thread_pool.h>
#include <parquet/arrow/writer.h>
#include <unistd.h>

#include <filesystem>

#include "ketch/exec/sources/scan_source.h"
#include "ketch/plan/optimizer/materialize_scan_tasks.h"
#include "test_util.h"

namespace ketch {
namespace {

std::filesystem::path TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("ketch_scan_tasks_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// A Parquet file with int64 column "a" = first .. first + rows - 1.
void WriteInts(const std::string& path, int64_t first, int64_t rows, int64_t row_group_size) {
  arrow::Int64Builder builder;
  for (int64_t i = 0; i < rows; ++i) ASSERT_OK(builder.Append(first + i));
  std::shared_ptr<arrow::Array> values;
  ASSERT_OK(builder.Finish(&values));
  auto table = arrow::Table::Make(arrow::schema({arrow::field("a", arrow::int64())}), {values});
  std::shared_ptr<arrow::io::FileOutputStream> out;
  ASSERT_OK_AND_ASSIGN(out, arrow::io::FileOutputStream::Open(path));
  ASSERT_OK(parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), out, row_group_size));
  ASSERT_OK(out->Close());
}

LogicalPlanPtr ParquetScan(const std::vector<std::string>& paths) {
  ScanInfo info;
  for (const auto& path : paths) {
    info.files.push_back(ScanFile{path, static_cast<int64_t>(std::filesystem::file_size(path)), {}});
  }
  info.file_schema = arrow::schema({arrow::field("a", arrow::int64())});
  return LogicalPlan::Scan(std::move(info)).ValueOrDie();
}

// The scan node under `plan` (the plan itself or its input).
const LogicalPlan& ScanOf(const LogicalPlanPtr& plan) {
  return plan->kind() == LogicalKind::kScan ? *plan : *plan->inputs()[0];
}

struct Emitted {
  int32_t group;
  int64_t first_row;
  std::vector<int64_t> values;
};

std::vector<Emitted> RunScan(const LogicalPlan& scan, int parallel, ScanMetrics* metrics) {
  ScanSource source(scan.scan(), scan.schema(), 1000, arrow::internal::GetCpuThreadPool(), parallel);
  source.set_scan_metrics(metrics);
  std::vector<Emitted> out;
  auto st = source.Produce([&](std::shared_ptr<arrow::RecordBatch> batch, int64_t first_row,
                               std::shared_ptr<arrow::Int64Array>, int64_t partition) {
    EXPECT_EQ(partition, source.emitting_group());
    const auto& a = static_cast<const arrow::Int64Array&>(*batch->column(0));
    out.push_back({source.emitting_group(), first_row,
                   std::vector<int64_t>(a.raw_values(), a.raw_values() + a.length())});
    return arrow::Status::OK();
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

// Groups are 0..G-1, non-decreasing over the entries, each used.
void ExpectWellFormedGroups(const ScanTasks& tasks) {
  ASSERT_FALSE(tasks.tasks.empty());
  EXPECT_EQ(tasks.tasks.front().group, 0);
  for (size_t i = 1; i < tasks.tasks.size(); ++i) {
    const int32_t step = tasks.tasks[i].group - tasks.tasks[i - 1].group;
    EXPECT_TRUE(step == 0 || step == 1) << "entry " << i;
  }
}

TEST(ScanTasks, SmallFilesAreMergedIntoGroupsInFileOrder) {
  const auto dir = TempDir("merge");
  std::vector<std::string> paths;
  for (int f = 0; f < 25; ++f) {
    paths.push_back((dir / ("f" + std::to_string(100 + f) + ".parquet")).string());
    WriteInts(paths.back(), f * 10, 10, 1024);
  }
  MaterializeScanTasks rule(ScanTaskSizing{96LL << 20, 384LL << 20, /*workers=*/4, /*max_sources=*/10});
  Transformed planned;
  ASSERT_OK_AND_ASSIGN(planned, rule.Apply(ParquetScan(paths)));
  const ScanTasks& tasks = *planned.plan->scan().tasks;
  ExpectWellFormedGroups(tasks);
  EXPECT_EQ(tasks.num_tasks(), 3);
  ASSERT_EQ(tasks.tasks.size(), 25u);
  for (int f = 0; f < 25; ++f) {
    EXPECT_EQ(tasks.tasks[f].file, f);
    EXPECT_EQ(tasks.tasks[f].group, f / 10);
    EXPECT_EQ(tasks.tasks[f].first_row, f * 10);
  }
  EXPECT_NE(tasks.reason.find("25 small files merged, at most 10 per task"), std::string::npos)
      << tasks.reason;

  for (int parallel : {1, 4}) {
    ScanMetrics metrics;
    std::vector<int64_t> all;
    int32_t last_group = 0;
    for (const auto& emitted : RunScan(*planned.plan, parallel, &metrics)) {
      EXPECT_GE(emitted.group, last_group);  // tasks never interleave
      last_group = emitted.group;
      for (size_t k = 0; k < emitted.values.size(); ++k) {
        EXPECT_EQ(emitted.values[k], emitted.first_row + static_cast<int64_t>(k));  // row numbers
        EXPECT_EQ(emitted.group, emitted.values[k] / 100) << emitted.values[k];     // file f/10's task
      }
      all.insert(all.end(), emitted.values.begin(), emitted.values.end());
    }
    ASSERT_EQ(all.size(), 250u);
    for (int64_t i = 0; i < 250; ++i) EXPECT_EQ(all[i], i);
    EXPECT_EQ(metrics.scan_tasks.load(), 3);
    EXPECT_EQ(metrics.files_read.load(), 25);
  }

  // Each task run by itself (as on another worker) reads exactly its files, numbering rows as the
  // whole scan does.
  for (int64_t t = 0; t < tasks.num_tasks(); ++t) {
    ScanInfo info = planned.plan->scan();
    info.tasks = std::make_shared<ScanTasks>(tasks.OnlyTask(t));
    LogicalPlanPtr alone;
    ASSERT_OK_AND_ASSIGN(alone, LogicalPlan::Scan(std::move(info)));
    ScanMetrics metrics;
    std::vector<int64_t> values;
    for (const auto& emitted : RunScan(*alone, 2, &metrics)) {
      EXPECT_EQ(emitted.group, 0);
      for (size_t k = 0; k < emitted.values.size(); ++k) {
        EXPECT_EQ(emitted.values[k], emitted.first_row + static_cast<int64_t>(k));
      }
      values.insert(values.end(), emitted.values.begin(), emitted.values.end());
    }
    const int64_t files = t < 2 ? 10 : 5;
    ASSERT_EQ(static_cast<int64_t>(values.size()), files * 10);
    EXPECT_EQ(values.front(), t * 100);
    EXPECT_EQ(metrics.files_read.load(), files);
    EXPECT_EQ(metrics.scan_tasks.load(), 1);
  }

  MaterializeScanTasks capped(ScanTaskSizing{96LL << 20, 384LL << 20, 4, /*max_sources=*/4});
  ASSERT_OK_AND_ASSIGN(planned, capped.Apply(ParquetScan(paths)));
  EXPECT_EQ(planned.plan->scan().tasks->num_tasks(), 7);
  std::filesystem::remove_all(dir);
}

TEST(ScanTasks, LargeRowGroupIsSplitByRowRangeBelowAnExpensivePipelineAndReadOnce) {
  const auto dir = TempDir("split");
  const std::string path = (dir / "one.parquet").string();
  const int64_t rows = 50'000;
  WriteInts(path, 0, rows, rows);  // one row group
  auto scan = ParquetScan({path});
  // A URL download above the scan makes its pipeline expensive.
  ExprPtr download =
      Expr::Alias(Expr::Call("url_download", {Expr::Cast(Expr::Column("a"), arrow::utf8())}), "b");
  LogicalPlanPtr project;
  ASSERT_OK_AND_ASSIGN(project, LogicalPlan::Project(scan, {Expr::Column("a"), download}));
  MaterializeScanTasks rule(ScanTaskSizing{96LL << 20, 384LL << 20, /*workers=*/3, 10});
  Transformed planned;
  ASSERT_OK_AND_ASSIGN(planned, rule.Apply(project));
  const LogicalPlan& split = ScanOf(planned.plan);
  const ScanTasks& tasks = *split.scan().tasks;
  ExpectWellFormedGroups(tasks);
  EXPECT_GE(tasks.num_tasks(), 6);
  int64_t next = 0;
  for (const auto& task : tasks.tasks) {
    EXPECT_EQ(task.row_groups, std::vector<int>{0});
    EXPECT_EQ(task.row_offset, next);  // contiguous row ranges covering the row group
    EXPECT_EQ(task.first_row, next);
    EXPECT_GT(task.row_count, 0);
    next += task.row_count;
  }
  EXPECT_EQ(next, rows);

  ScanMetrics split_metrics, plain_metrics;
  std::vector<int64_t> all;
  for (const auto& emitted : RunScan(split, 4, &split_metrics)) {
    const auto& task = tasks.tasks[emitted.group];  // one entry per task here
    for (size_t k = 0; k < emitted.values.size(); ++k) {
      const int64_t v = emitted.values[k];
      EXPECT_EQ(v, emitted.first_row + static_cast<int64_t>(k));
      EXPECT_TRUE(v >= task.row_offset && v < task.row_offset + task.row_count) << v;
    }
    all.insert(all.end(), emitted.values.begin(), emitted.values.end());
  }
  ASSERT_EQ(static_cast<int64_t>(all.size()), rows);
  for (int64_t i = 0; i < rows; ++i) ASSERT_EQ(all[i], i);
  EXPECT_EQ(split_metrics.scan_tasks.load(), tasks.num_tasks());
  EXPECT_EQ(split_metrics.row_groups_read.load(), 1);  // read once, not once per task

  MaterializeScanTasks cheap(ScanTaskSizing{96LL << 20, 384LL << 20, 3, 10});
  Transformed whole;
  ASSERT_OK_AND_ASSIGN(whole, cheap.Apply(scan));
  EXPECT_EQ(whole.plan->scan().tasks->num_tasks(), 1);  // a cheap pipeline keeps it whole
  RunScan(*whole.plan, 4, &plain_metrics);
  EXPECT_EQ(split_metrics.bytes_read.load(), plain_metrics.bytes_read.load());

  // A scan given one range alone (as another process would be) emits just that range, numbered
  // from its first source row.
  ScanInfo one = split.scan();
  one.tasks = std::make_shared<ScanTasks>(tasks.OnlyTask(2));
  ASSERT_EQ(one.tasks->tasks.size(), 1u);
  LogicalPlanPtr alone;
  ASSERT_OK_AND_ASSIGN(alone, LogicalPlan::Scan(std::move(one)));
  ScanMetrics alone_metrics;
  std::vector<int64_t> values;
  for (const auto& emitted : RunScan(*alone, 4, &alone_metrics)) {
    EXPECT_EQ(emitted.group, 0);
    values.insert(values.end(), emitted.values.begin(), emitted.values.end());
  }
  ASSERT_EQ(static_cast<int64_t>(values.size()), tasks.tasks[2].row_count);
  EXPECT_EQ(values.front(), tasks.tasks[2].row_offset);
  EXPECT_EQ(values.back(), tasks.tasks[2].row_offset + tasks.tasks[2].row_count - 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ketch
