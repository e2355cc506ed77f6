#include "ketch/plan/optimizer/materialize_scan_tasks.h"

#include <arrow/io/interfaces.h>
#include <arrow/util/future.h>
#include <arrow/util/thread_pool.h>
#include <parquet/arrow/reader.h>
#include <parquet/statistics.h>

#include <cstdio>
#include <set>

#include "ketch/expr/expr_analysis.h"
#include "ketch/io/formats/parquet_footers.h"
#include "ketch/io/formats/parquet_format.h"
#include "ketch/plan/optimizer/stats_pruning.h"

namespace ketch {
namespace {

bool IsExpensive(const LogicalPlan& plan) {
  for (const auto& expr : plan.exprs()) {
    if (CallsExpensiveFunction(*expr)) return true;
  }
  return plan.predicate() && CallsExpensiveFunction(*plan.predicate());
}

bool IsBlocking(LogicalKind kind) {
  return kind == LogicalKind::kSort || kind == LogicalKind::kAggregate || kind == LogicalKind::kJoin;
}

std::string Megabytes(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

// True when a conjunct reads partition columns only (and calls no UDF): its value is the same for
// every row of a file, so it is decided per file.
bool PartitionOnly(const ScanInfo& info, const Expr& conjunct) {
  std::set<std::string> used;
  conjunct.CollectColumns(&used);
  bool partition_only = !used.empty() && !conjunct.HasUdf();
  for (const auto& name : used) partition_only &= info.partition_schema->GetFieldIndex(name) >= 0;
  return partition_only;
}

// True when the file's partition values make a partition-only conjunct false or null.
arrow::Result<bool> PrunedByPartition(const ScanInfo& info, const ScanFile& file,
                                      const std::vector<ExprPtr>& conjuncts) {
  if (info.partition_schema->num_fields() == 0) return false;
  arrow::ArrayVector columns;
  for (const auto& value : file.partition_values) {
    ARROW_ASSIGN_OR_RAISE(auto column, arrow::MakeArrayFromScalar(*value, 1));
    columns.push_back(std::move(column));
  }
  auto row = arrow::RecordBatch::Make(info.partition_schema, 1, columns);
  for (const auto& conjunct : conjuncts) {
    if (!PartitionOnly(info, *conjunct)) continue;
    ARROW_ASSIGN_OR_RAISE(auto result, Evaluate(*conjunct, *row));
    if (result->IsNull(0)) return true;
    if (result->type()->id() == arrow::Type::BOOL &&
        !std::static_pointer_cast<arrow::BooleanArray>(result)->Value(0)) {
      return true;
    }
  }
  return false;
}

// The data columns a scan decodes: its output and filter columns that are not partition columns.
std::vector<std::string> ReadColumns(const ScanInfo& info, const arrow::Schema& output) {
  std::set<std::string> needed;
  for (const auto& field : output.fields()) needed.insert(field->name());
  if (info.filter) info.filter->CollectColumns(&needed);
  std::vector<std::string> out;
  for (const auto& field : info.file_schema->fields()) {
    if (needed.count(field->name()) && info.partition_schema->GetFieldIndex(field->name()) < 0) {
      out.push_back(field->name());
    }
  }
  return out;
}

// Min/max statistics of a top-level column in a row group, through Arrow's conversion of Parquet
// statistics to scalars.
std::optional<ColumnStats> RowGroupStats(const parquet::FileMetaData& metadata, int row_group,
                                         const std::string& column) {
  const int leaf = metadata.schema()->ColumnIndex(column);
  if (leaf < 0) return std::nullopt;
  auto rg = metadata.RowGroup(row_group);
  auto chunk = rg->ColumnChunk(leaf);
  auto stats = chunk->statistics();
  if (!stats) return std::nullopt;
  ColumnStats out;
  out.num_rows = rg->num_rows();
  out.null_count = stats->HasNullCount() ? stats->null_count() : -1;
  if (stats->HasMinMax()) {
    if (!parquet::arrow::StatisticsAsScalars(*stats, &out.min, &out.max).ok()) {
      out.min = nullptr;
      out.max = nullptr;
    }
  }
  return out;
}

// Reads the footers of `files` in parallel on Arrow's I/O pool into `metadata` (by file index),
// through the scan's footer cache when it has one (a footer read before is not fetched again).
// Every read is waited for; the first error, naming its file, is returned.
arrow::Status ReadFooters(const ScanInfo& info, const std::vector<int32_t>& files,
                          std::vector<std::shared_ptr<parquet::FileMetaData>>* metadata) {
  auto* executor = arrow::io::default_io_context().executor();
  std::vector<arrow::Future<std::shared_ptr<parquet::FileMetaData>>> futures;
  arrow::Status first_error;
  for (int32_t f : files) {
    if (info.footers) {
      if (auto kept = info.footers->Peek(f, info.files[f].path)) {  // no task for what is in memory already
        futures.push_back(arrow::Future<std::shared_ptr<parquet::FileMetaData>>::MakeFinished(kept));
        continue;
      }
    }
    const ScanFile& file = info.files[f];
    auto read = [footers = info.footers, f, path = file.path, size = file.size_bytes, s3 = info.s3] {
      return footers ? footers->Get(f, path, size, s3) : io::ReadParquetMetadata(path, s3, size);
    };
    auto future = executor->Submit(std::move(read));
    if (!future.ok()) {
      first_error = future.status();
      break;
    }
    futures.push_back(std::move(*future));
  }
  for (size_t k = 0; k < futures.size(); ++k) {
    const auto& result = futures[k].result();
    if (!result.ok()) {
      if (first_error.ok())
        first_error = result.status().WithMessage("read_parquet: ", result.status().message());
      continue;
    }
    (*metadata)[files[k]] = *result;
  }
  return first_error;
}

struct RowGroupUnit {
  int32_t file;
  int row_group;
  int64_t first_row;
  int64_t num_rows;
  int64_t bytes;
};

arrow::Result<LogicalPlanPtr> Materialize(const LogicalPlan& scan, const ScanTaskSizing& sizing,
                                          bool expensive) {
  ScanInfo info = scan.scan();
  auto tasks = std::make_shared<ScanTasks>();
  std::vector<ExprPtr> conjuncts;
  if (info.filter) SplitConjuncts(info.filter, &conjuncts);

  std::vector<int32_t> kept;
  for (size_t i = 0; i < info.files.size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(bool pruned, PrunedByPartition(info, info.files[i], conjuncts));
    if (pruned) {
      tasks->files_pruned++;
    } else {
      kept.push_back(static_cast<int32_t>(i));
    }
  }
  const std::string files_text = std::to_string(kept.size()) + (kept.size() == 1 ? " file" : " files");

  if (info.format != FileFormat::kParquet) {
    int64_t bytes = 0;
    for (int32_t f : kept) {
      ScanTask task;
      task.file = f;
      task.size_bytes = std::max<int64_t>(0, info.files[f].size_bytes);
      bytes += task.size_bytes;
      tasks->tasks.push_back(std::move(task));
    }
    tasks->reason = "one per file: " + files_text + ", " + Megabytes(bytes) + "; " +
                    FileFormatName(info.format) + " files are not split";
    info.tasks = std::move(tasks);
    return LogicalPlan::Scan(std::move(info));
  }

  // Every row of a kept file passes a filter on partition columns only: the limit counts file rows.
  bool limit_prunes = info.limit >= 0;
  for (const auto& conjunct : conjuncts) limit_prunes &= PartitionOnly(info, *conjunct);

  // Footers, read in parallel on Arrow's I/O pool; errors name the file. Statistics pruning needs
  // every kept file's. A limit without such a filter needs only the files it reaches: their
  // footers are read in file order, in waves growing from one file (the first file's is kept from
  // schema inference), until their rows cover the limit; later files are never opened.
  tasks->metadata.resize(info.files.size());
  int64_t files_past_limit = 0;
  if (limit_prunes) {
    size_t done = 0;
    size_t wave = 1;
    int64_t rows = 0;
    while (done < kept.size() && rows < info.limit) {
      const size_t end = std::min(kept.size(), done + wave);
      const std::vector<int32_t> batch(kept.begin() + done, kept.begin() + end);
      ARROW_RETURN_NOT_OK(ReadFooters(info, batch, &tasks->metadata));
      for (int32_t f : batch) rows += tasks->metadata[f]->num_rows();
      done = end;
      wave = std::min<size_t>(wave * 2, 64);
    }
    files_past_limit = static_cast<int64_t>(kept.size() - done);
    kept.resize(done);
  } else {
    ARROW_RETURN_NOT_OK(ReadFooters(info, kept, &tasks->metadata));
  }

  const std::vector<std::string> columns = ReadColumns(info, *scan.schema());
  std::vector<RowGroupUnit> units;
  int64_t row = 0;
  int64_t limit_rows = 0;
  for (int32_t f : kept) {
    const auto& metadata = *tasks->metadata[f];
    // Statistics are in the file's types: a column read as another type (schema hint, or a type
    // that changed between files) orders differently, so its statistics prove nothing.
    ARROW_ASSIGN_OR_RAISE(auto stored, io::ParquetArrowSchema(metadata));
    auto stats_of = [&](int rg, const std::string& column) -> std::optional<ColumnStats> {
      auto in_file = stored->GetFieldByName(column);
      auto in_scan = info.file_schema->GetFieldByName(column);
      if (!in_file || !in_scan || !in_file->type()->Equals(*in_scan->type())) return std::nullopt;
      return RowGroupStats(metadata, rg, column);
    };
    for (int rg = 0; rg < metadata.num_row_groups(); ++rg) {
      const int64_t num_rows = metadata.RowGroup(rg)->num_rows();
      const int64_t first_row = row;
      row += num_rows;
      tasks->row_groups_total++;
      bool skip = false;
      for (const auto& conjunct : conjuncts) {
        if (conjunct->HasUdf()) continue;
        if (CannotMatch(*conjunct, [&](const std::string& column) { return stats_of(rg, column); })) {
          skip = true;
          break;
        }
      }
      if (skip) {
        tasks->row_groups_pruned++;
        continue;
      }
      if (limit_prunes && limit_rows >= info.limit) {
        tasks->limit_skipped_row_groups++;
        continue;
      }
      limit_rows += num_rows;
      units.push_back({f, rg, first_row, num_rows, io::ParquetRowGroupBytes(metadata, rg, columns)});
    }
  }

  int64_t total_bytes = 0;
  for (const auto& u : units) total_bytes += u.bytes;
  // Every worker gets a task to decode (two when the pipeline above is expensive), as far as row
  // groups allow; otherwise row groups are merged up to the minimum task size.
  const int64_t wanted_tasks = (expensive ? 2LL : 1LL) * std::max(1, sizing.workers);
  const int64_t target = std::clamp<int64_t>(total_bytes / wanted_tasks, 1,
                                             expensive ? sizing.max_size_bytes : sizing.min_size_bytes);
  // Greedy: consecutive row groups of one file share a task until it reaches the target (or the
  // next one would pass the maximum).
  for (size_t i = 0; i < units.size(); ++i) {
    const auto& u = units[i];
    bool extend = false;
    if (!tasks->tasks.empty()) {
      auto& last = tasks->tasks.back();
      extend = last.file == u.file && last.row_groups.back() + 1 == u.row_group && last.size_bytes < target &&
               last.size_bytes + u.bytes <= sizing.max_size_bytes;
    }
    if (extend) {
      auto& last = tasks->tasks.back();
      last.row_groups.push_back(u.row_group);
      last.num_rows += u.num_rows;
      last.size_bytes += u.bytes;
    } else {
      ScanTask task;
      task.file = u.file;
      task.row_groups = {u.row_group};
      task.first_row = u.first_row;
      task.num_rows = u.num_rows;
      task.size_bytes = u.bytes;
      tasks->tasks.push_back(std::move(task));
    }
  }
  std::string reason = std::to_string(kept.size()) + (kept.size() == 1 ? " file, " : " files, ") +
                       std::to_string(units.size()) + " row groups, " + Megabytes(total_bytes) + " to read; ";
  if (expensive) {
    reason += "split by row group for " + std::to_string(sizing.workers) +
              " workers x 2 (UDFs, URL or image kernels run above the scan), at most " +
              Megabytes(sizing.max_size_bytes) + " each";
  } else {
    reason += "row groups merged up to " + Megabytes(target) + " per task (scan_tasks_min_size_bytes " +
              Megabytes(sizing.min_size_bytes) + ", or less to give each of " +
              std::to_string(sizing.workers) + " workers a task), at most " +
              Megabytes(sizing.max_size_bytes);
  }
  if (tasks->limit_skipped_row_groups > 0) {
    reason += "; " + std::to_string(tasks->limit_skipped_row_groups) + " row groups past the limit skipped";
  }
  if (files_past_limit > 0) {
    reason += "; " + std::to_string(files_past_limit) + (files_past_limit == 1 ? " file" : " files") +
              " past the limit not opened";
  }
  tasks->reason = std::move(reason);
  info.tasks = std::move(tasks);
  return LogicalPlan::Scan(std::move(info));
}

}  // namespace

arrow::Result<Transformed> MaterializeScanTasks::Apply(const LogicalPlanPtr& plan) const {
  return Visit(plan, false);
}

arrow::Result<Transformed> MaterializeScanTasks::Visit(const LogicalPlanPtr& plan,
                                                       bool expensive_above) const {
  if (plan->kind() == LogicalKind::kScan) {
    ARROW_ASSIGN_OR_RAISE(auto scan, Materialize(*plan, sizing_, expensive_above));
    return Transformed{scan, true};
  }
  // What runs above a blocking operator is not in the scan's pipeline.
  const bool expensive = IsBlocking(plan->kind()) ? false : expensive_above || IsExpensive(*plan);
  std::vector<LogicalPlanPtr> inputs;
  bool changed = false;
  for (const auto& input : plan->inputs()) {
    ARROW_ASSIGN_OR_RAISE(auto child, Visit(input, expensive));
    changed |= child.changed;
    inputs.push_back(child.plan);
  }
  if (!changed) return Transformed{plan, false};
  ARROW_ASSIGN_OR_RAISE(auto rebuilt, plan->WithInputs(std::move(inputs)));
  return Transformed{rebuilt, true};
}

}  // namespace ketch
