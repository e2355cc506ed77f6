#include "ketch/plan/optimizer/materialize_scan_tasks.h"

#include <arrow/io/interfaces.h>
#include <arrow/util/future.h>
#include <arrow/util/thread_pool.h>
#include <parquet/arrow/reader.h>
#include <parquet/statistics.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "ketch/common/exception_guard.h"
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
  return kind == LogicalKind::kSort || kind == LogicalKind::kAggregate || kind == LogicalKind::kJoin ||
         kind == LogicalKind::kWindow;
}

std::string Megabytes(int64_t bytes) {
  char buf[32];
  if (bytes < (1 << 20)) {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", static_cast<double>(bytes) / 1024);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  }
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
      return GuardExceptions("reading a Parquet footer", [&] {
        return footers ? footers->Get(f, path, size, s3) : io::ReadParquetMetadata(path, s3, size);
      });
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

// The pieces scan tasks are cut from: one Parquet row group (or, split for an expensive pipeline,
// a row range of one), or one whole CSV/JSON file.
struct Unit {
  int32_t file = 0;
  int row_group = -1;      // -1: a whole CSV/JSON file
  int64_t first_row = -1;  // -1: unknown (CSV/JSON)
  int64_t num_rows = -1;   // -1: unknown (CSV/JSON)
  int64_t bytes = 0;       // compressed column chunks read / file size
  int64_t row_offset = 0;  // a row range of the row group: its first row in the row group ...
  int64_t row_count = -1;  // ... and its length; -1 = the whole row group
};

// What grouping did, for explain.
struct Grouping {
  int64_t files_merged = 0;       // files that share a task with another file
  int64_t capped_by_sources = 0;  // tasks closed because they held max_sources files
  int64_t split_row_groups = 0;   // row groups split into row ranges
  int64_t row_ranges = 0;         // the row ranges they became
};

// Expensive pipeline: a Parquet row group larger than `target` bytes is cut into row ranges of
// about `target` bytes (equal row counts), so that its rows feed several tasks.
//
// Trade-off (why ranges of one row group are not read independently): Arrow 26's Parquet reader
// cannot start a column chunk mid-way without the page index (which most writers, pyarrow's
// default included, do not write), so a task reading rows [a, b) of a row group alone would fetch
// and decode the whole row group. Instead the ranges of one row group stay consecutive entries and
// the scan fetches and decodes that row group once, handing each range (task) its slice: bytes read
// equal a plain scan's. The cost: the ranges of one row group are produced by one decode, not in
// parallel, and a reader given only one of the ranges (e.g. another process) decodes the row group
// up to the range's end and drops the rows before it.
std::vector<Unit> SplitRowGroups(const std::vector<Unit>& units, double target, Grouping* grouping) {
  std::vector<Unit> out;
  for (const auto& u : units) {
    const int64_t pieces =
        u.row_group < 0 || u.num_rows < 2
            ? 1
            : std::min<int64_t>(u.num_rows, static_cast<int64_t>(std::ceil(u.bytes / target - 1e-9)));
    if (pieces <= 1) {
      out.push_back(u);
      continue;
    }
    grouping->split_row_groups++;
    grouping->row_ranges += pieces;
    for (int64_t i = 0; i < pieces; ++i) {
      const int64_t begin = u.num_rows * i / pieces, end = u.num_rows * (i + 1) / pieces;
      Unit range = u;
      range.row_offset = begin;
      range.row_count = end - begin;
      range.first_row = u.first_row + begin;
      range.num_rows = end - begin;
      range.bytes = u.bytes * (end - begin) / u.num_rows;
      out.push_back(range);
    }
  }
  return out;
}

// Cuts units (in file order) into scan tasks, greedily: a task takes the next unit while it holds
// fewer than `target` bytes (the same file) or `merge_bytes` (a new file; at most `max_sources`
// files), never past `max_size_bytes`. A row range of a split row group is a task by itself.
void GroupUnits(const std::vector<Unit>& units, int64_t target, int64_t merge_bytes,
                const ScanTaskSizing& sizing, ScanTasks* tasks, Grouping* grouping) {
  const int max_sources = std::max(1, sizing.max_sources);
  int64_t group_bytes = 0;
  int group_sources = 0;
  bool last_split = false;
  std::set<int32_t> merged_files;
  for (const auto& u : units) {
    const bool split = u.row_count >= 0;
    bool extend = false;
    if (!tasks->tasks.empty() && !split && !last_split) {
      const bool same_file = tasks->tasks.back().file == u.file;
      const int64_t limit = same_file ? target : merge_bytes;
      const bool fits = group_bytes < limit && group_bytes + u.bytes <= sizing.max_size_bytes;
      extend = fits && (same_file || group_sources < max_sources);
      if (fits && !extend) grouping->capped_by_sources++;
    }
    last_split = split;
    if (!extend) {
      ScanTask task;
      task.group = tasks->tasks.empty() ? 0 : tasks->tasks.back().group + 1;
      task.file = u.file;
      if (u.row_group >= 0) task.row_groups = {u.row_group};
      task.first_row = u.first_row;
      task.num_rows = u.num_rows;
      task.size_bytes = u.bytes;
      task.row_offset = u.row_offset;
      task.row_count = u.row_count;
      tasks->tasks.push_back(std::move(task));
      group_bytes = u.bytes;
      group_sources = 1;
      continue;
    }
    auto& last = tasks->tasks.back();
    group_bytes += u.bytes;
    if (last.file == u.file && u.row_group >= 0 && last.row_groups.back() + 1 == u.row_group) {
      last.row_groups.push_back(u.row_group);  // consecutive row groups of one file: one entry
      last.num_rows += u.num_rows;
      last.size_bytes += u.bytes;
      continue;
    }
    if (last.file != u.file) {
      group_sources++;
      merged_files.insert(last.file);
      merged_files.insert(u.file);
    }
    ScanTask task;
    task.group = last.group;
    task.file = u.file;
    if (u.row_group >= 0) task.row_groups = {u.row_group};
    task.first_row = u.first_row;
    task.num_rows = u.num_rows;
    task.size_bytes = u.bytes;
    tasks->tasks.push_back(std::move(task));
  }
  grouping->files_merged = static_cast<int64_t>(merged_files.size());
}

std::string Plural(int64_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// Builds the tasks from `units` and says why there are this many.
void MakeTasks(std::vector<Unit> units, const ScanInfo& info, const ScanTaskSizing& sizing, bool expensive,
               size_t num_files, ScanTasks* tasks) {
  int64_t total_bytes = 0;
  for (const auto& u : units) total_bytes += u.bytes;
  // Below an expensive pipeline every worker gets two tasks, as far as the units allow (row groups
  // split into row ranges if need be). Otherwise row groups and small files are merged up to the
  // minimum task size, as Daft does: the native executor decodes the row groups of one task side
  // by side anyway, and each task is a partition (one written file), so a small file is one task.
  const int64_t wanted_tasks = expensive ? 2LL * std::max(1, sizing.workers) : 1LL;
  const double exact_target = std::clamp(
      static_cast<double>(total_bytes) / static_cast<double>(wanted_tasks), 1.0,
      std::max(1.0, static_cast<double>(expensive ? sizing.max_size_bytes : sizing.min_size_bytes)));
  const int64_t target = std::max<int64_t>(1, static_cast<int64_t>(exact_target));
  Grouping grouping;
  // A Lance fragment is split by row ranges too (its reader takes an offset), unless a filter is
  // pushed: Lance's offset counts rows after its filter.
  const bool lance = info.format == FileFormat::kLance;
  if (expensive && (info.format == FileFormat::kParquet || (lance && !info.filter)))
    units = SplitRowGroups(units, exact_target, &grouping);
  const int64_t merge_bytes = expensive ? target : sizing.min_size_bytes;
  GroupUnits(units, target, merge_bytes, sizing, tasks, &grouping);

  const bool parquet = info.format == FileFormat::kParquet;
  int64_t row_groups = 0;
  for (const auto& u : units) row_groups += u.row_group >= 0 && u.row_offset == 0 ? 1 : 0;
  std::string reason = Plural(tasks->num_tasks(), "task") + " from " +
                       Plural(static_cast<int64_t>(num_files), lance ? "fragment" : "file") +
                       (parquet ? ", " + Plural(row_groups, "row group") : std::string()) + ", " +
                       Megabytes(total_bytes) + " to read; ";
  if (expensive) {
    reason += "cut for " + std::to_string(sizing.workers) +
              " workers x 2 (UDFs, URL or image kernels run above the scan): about " + Megabytes(target) +
              " per task, at most " + Megabytes(sizing.max_size_bytes);
  } else if (parquet) {
    reason += "row groups and small files merged up to " + Megabytes(target) +
              " per task (scan_tasks_min_size_bytes " + Megabytes(sizing.min_size_bytes) + "), at most " +
              Megabytes(sizing.max_size_bytes);
  } else if (lance) {
    reason += "small fragments merged up to " + Megabytes(sizing.min_size_bytes) +
              " per task (scan_tasks_min_size_bytes), at most " +
              std::to_string(std::max(1, sizing.max_sources)) + " per task";
  } else {
    reason += "whole files merged up to " + Megabytes(sizing.min_size_bytes) +
              " per task (scan_tasks_min_size_bytes); " + FileFormatName(info.format) +
              " files are not split";
  }
  if (grouping.files_merged > 0 && !lance) {
    reason += "; " + std::to_string(grouping.files_merged) + " small files merged, at most " +
              std::to_string(std::max(1, sizing.max_sources)) + " per task (max_sources_per_scan_task)";
    if (grouping.capped_by_sources > 0) {
      reason += ", " + Plural(grouping.capped_by_sources, "task") + " closed at that cap";
    }
  }
  if (grouping.split_row_groups > 0) {
    reason += "; " + Plural(grouping.split_row_groups, lance ? "fragment" : "row group") + " split into " +
              std::to_string(grouping.row_ranges) +
              (lance ? " row ranges" : " row ranges (each row group still read once)");
  }
  tasks->reason = std::move(reason);
}

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

  if (info.format == FileFormat::kLance && info.lance.nearest && !kept.empty()) {
    // Lance searches the whole version at once (its index spans the fragments): one task, one read.
    ScanTask task;
    task.file = kept[0];
    task.row_groups = {0};
    task.num_rows = info.lance.nearest->k;
    for (int32_t f : kept) task.size_bytes += std::max<int64_t>(0, info.files[f].size_bytes);
    tasks->tasks.push_back(std::move(task));
    tasks->reason = "1 task: Lance's nearest-neighbour search runs over all " +
                    Plural(static_cast<int64_t>(kept.size()), "fragment") + " at once";
    info.tasks = std::move(tasks);
    return LogicalPlan::Scan(std::move(info));
  }

  if (info.format == FileFormat::kLance) {
    // Fragments (live row counts known from the manifest); with a limit and no filter, only the
    // fragments that reach it. Each unit is "row group 0" of its fragment, so that a fragment
    // split into row ranges is planned and read like a split Parquet row group.
    std::vector<Unit> units;
    int64_t row = 0;
    int64_t skipped = 0;
    for (int32_t f : kept) {
      const ScanFile& fragment = info.files[f];
      if (!info.filter && info.limit >= 0 && row >= info.limit) {
        skipped++;
        continue;
      }
      Unit unit;
      unit.file = f;
      unit.row_group = 0;
      unit.first_row = row;
      unit.num_rows = fragment.num_rows;
      unit.bytes = std::max<int64_t>(0, fragment.size_bytes);
      row += std::max<int64_t>(0, fragment.num_rows);
      if (fragment.num_rows == 0) continue;  // every row deleted
      units.push_back(unit);
    }
    MakeTasks(std::move(units), info, sizing, expensive, kept.size() - skipped, tasks.get());
    if (skipped > 0) tasks->reason += "; " + Plural(skipped, "fragment") + " past the limit not read";
    info.tasks = std::move(tasks);
    return LogicalPlan::Scan(std::move(info));
  }

  if (info.format == FileFormat::kVideo) {
    // One task per video, never merged: decoding, not reading, is the cost (a small file may hold
    // minutes of frames), so N videos give N tasks to spread over the workers. With fewer videos
    // than 2 tasks per worker, the largest are split into parts of their frames (ranges at least
    // min_size_bytes / 16 of the file each), so that one long video keeps every worker busy. Not
    // with a pushed limit (a few frames are wanted), a start_time (the index counts from the seek)
    // or keyframes only (cheap, and whether the others count is the codec's choice).
    const int64_t wanted = 2LL * std::max(1, sizing.workers);
    const int64_t range_bytes = std::max<int64_t>(1, sizing.min_size_bytes / 16);
    std::vector<int32_t> ranges(kept.size(), 1);
    if (info.limit < 0 && info.video.start_time == 0 && !info.video.is_key_frame.value_or(false)) {
      for (int64_t total = static_cast<int64_t>(kept.size()); total < wanted; ++total) {
        // One more part for the video with the most bytes per part, if its parts stay large enough.
        size_t best = kept.size();
        double best_bytes = 0;
        for (size_t i = 0; i < kept.size(); ++i) {
          const double bytes = static_cast<double>(std::max<int64_t>(0, info.files[kept[i]].size_bytes));
          if (bytes / (ranges[i] + 1) >= static_cast<double>(range_bytes) && bytes / ranges[i] > best_bytes) {
            best = i;
            best_bytes = bytes / ranges[i];
          }
        }
        if (best == kept.size()) break;
        ++ranges[best];
      }
    }
    int64_t total_bytes = 0;
    int64_t split = 0;
    for (size_t i = 0; i < kept.size(); ++i) {
      const int32_t f = kept[i];
      total_bytes += std::max<int64_t>(0, info.files[f].size_bytes);
      if (ranges[i] > 1) ++split;
      for (int32_t r = 0; r < ranges[i]; ++r) {
        ScanTask task;
        task.group = static_cast<int32_t>(tasks->tasks.size());
        task.file = f;
        task.size_bytes = std::max<int64_t>(0, info.files[f].size_bytes) / ranges[i];
        task.range_index = r;
        task.range_count = ranges[i];
        tasks->tasks.push_back(std::move(task));
      }
    }
    tasks->reason = Plural(tasks->num_tasks(), "task") + " from " +
                    Plural(static_cast<int64_t>(kept.size()), "file") + ", " + Megabytes(total_bytes) +
                    " to read; one task per video (frames decode and stream batch by batch; videos are not "
                    "merged)";
    if (split > 0) {
      tasks->reason += "; " + Plural(split, "video") + " split into parts of equal frame counts for " +
                       std::to_string(std::max(1, sizing.workers)) + " workers";
    }
    info.tasks = std::move(tasks);
    return LogicalPlan::Scan(std::move(info));
  }

  if (info.format != FileFormat::kParquet) {
    std::vector<Unit> units;
    for (int32_t f : kept) {
      Unit unit;
      unit.file = f;
      unit.bytes = std::max<int64_t>(0, info.files[f].size_bytes);
      units.push_back(unit);
    }
    MakeTasks(std::move(units), info, sizing, expensive, kept.size(), tasks.get());
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
  std::vector<Unit> units;
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
      Unit unit;
      unit.file = f;
      unit.row_group = rg;
      unit.first_row = first_row;
      unit.num_rows = num_rows;
      unit.bytes = io::ParquetRowGroupBytes(metadata, rg, columns);
      units.push_back(unit);
    }
  }

  const size_t num_files = kept.size();
  MakeTasks(std::move(units), info, sizing, expensive, num_files, tasks.get());
  std::string reason = std::move(tasks->reason);
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
