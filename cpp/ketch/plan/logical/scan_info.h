#pragma once

#include <arrow/api.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ketch/expr/expr.h"
#include "ketch/io/formats/format_options.h"
#include "ketch/io/formats/lance_nearest.h"
#include "ketch/io/object_store.h"

namespace parquet {
class FileMetaData;
}
namespace ketch::io {
class ParquetFooters;
}

namespace ketch {

/// One input file; `partition_values` holds one scalar per hive partition column (in
/// ScanInfo::partition_schema order), parsed from the file's directory names.
struct ScanFile {
  std::string path;  ///< local path or s3:// URL
  int64_t size_bytes = -1;
  std::vector<std::shared_ptr<arrow::Scalar>> partition_values;
  /// Lance: the fragment's id in the dataset version read (`path` is then the dataset's URI), and
  /// its live rows (deletions excluded); -1 for other formats.
  int64_t fragment_id = -1;
  int64_t num_rows = -1;
};

/// What a Lance scan knows besides its fragments: the dataset and the one version every task of
/// the query reads (pinned when read_lance is called, so a concurrent commit changes nothing).
struct LanceOptions {
  std::string uri;
  int64_t version = -1;
  /// pylance's storage_options (object store keys: aws_region, aws_endpoint, ...), from IOConfig.
  std::map<std::string, std::string> storage_options;
  /// The dataset's vector indexes (read_lance asks Lance), for PushDownNearest.
  std::vector<io::LanceVectorIndex> vector_indexes;
  /// Set by PushDownNearest: the scan returns only Lance's k nearest rows (see lance_nearest.h).
  std::optional<io::LanceNearest> nearest;
  /// Why a top-k by distance over this scan stays brute force (explain); "" = none seen.
  std::string nearest_note;
};

/// One entry of a scan's task list: whole row groups of one Parquet file, a row range of one row
/// group, or one whole CSV/JSON file. A scan task (Daft's unit of work; one partition once the
/// executor maps tasks to partitions) is a run of consecutive entries with the same `group`: small
/// files merged into one task are several entries sharing a group. Groups are numbered 0..G-1 in
/// file order, every group has at least one entry, and entries of one group are consecutive.
struct ScanTask {
  int32_t file = 0;             ///< index into ScanInfo::files
  std::vector<int> row_groups;  ///< Parquet: the row groups to read; empty for CSV/JSON (whole file)
  int64_t first_row = -1;       ///< source row number of the entry's first row; -1 = count at run time
  int64_t num_rows = -1;        ///< -1 = unknown (CSV/JSON)
  int64_t size_bytes = 0;       ///< estimated bytes read (compressed column chunks / file size)
  int32_t group = 0;            ///< the scan task this entry belongs to (0..G-1, non-decreasing)
  /// Parquet row range within the one row group in `row_groups` (a large row group split for an
  /// expensive pipeline): rows [row_offset, row_offset + row_count) of it. row_count -1 = the whole
  /// row groups. Entries splitting one row group are consecutive; the scan reads that row group
  /// once and hands each entry its slice (see ScanSource).
  int64_t row_offset = 0;
  int64_t row_count = -1;
  /// Video: part `range_index` of `range_count` of one long video's frames, cut at frame
  /// timestamps into runs of nearly equal count (VideoFrameOptions::range_index); 1 = the whole.
  int32_t range_index = 0;
  int32_t range_count = 1;
};

/// The scan tasks of a scan, made by the optimizer's last rule after every pushdown, with the
/// numbers explain shows and the scan's metrics start from.
struct ScanTasks {
  std::vector<ScanTask> tasks;  ///< the entries, in file and row order; grouped by ScanTask::group
  std::vector<std::shared_ptr<parquet::FileMetaData>> metadata;  ///< per file (Parquet; footers read once)
  std::string reason;                                            ///< why this many tasks, for explain
  int64_t files_pruned = 0;                                      ///< by partition values
  int64_t row_groups_total = 0;                                  ///< in the files not pruned
  int64_t row_groups_pruned = 0;                                 ///< by min/max statistics
  int64_t limit_skipped_row_groups = 0;                          ///< not needed to reach a pushed limit

  /// Number of scan tasks (groups G; 0 when everything was pruned).
  int64_t num_tasks() const { return tasks.empty() ? 0 : static_cast<int64_t>(tasks.back().group) + 1; }
  /// Partitions the scan produces: one per scan task (group).
  int64_t num_partitions() const { return num_tasks(); }
  /// Scan task `task` alone, its entries renumbered as task 0: to run one task by itself (e.g. on
  /// another worker). The planning counts (pruned files and row groups) stay with task 0 only, so
  /// that the metrics of all tasks run one by one add up to the scan's. A row range of a split row
  /// group run alone decodes its row group up to the range's end (see ScanSource).
  ScanTasks OnlyTask(int64_t task) const {
    ScanTasks out = *this;
    out.tasks.clear();
    for (const auto& entry : tasks) {
      if (entry.group != task) continue;
      out.tasks.push_back(entry);
      out.tasks.back().group = 0;
    }
    if (task != 0) out.files_pruned = out.row_groups_pruned = out.limit_skipped_row_groups = 0;
    return out;
  }
};

/// What a file scan reads, including what the optimizer pushed into it.
struct ScanInfo {
  FileFormat format = FileFormat::kParquet;
  std::vector<ScanFile> files;
  /// Columns stored in the files (after schema hints), then the partition columns.
  std::shared_ptr<arrow::Schema> file_schema;
  /// The hive partition columns (the tail of file_schema); empty when not partitioned.
  std::shared_ptr<arrow::Schema> partition_schema;
  std::optional<std::vector<std::string>> columns;  ///< projection pushdown; none = all
  ExprPtr filter;                                   ///< filter pushdown; nullptr = none
  int64_t limit = -1;                               ///< limit pushdown (rows after the filter); -1 = none
  /// The data columns as the JSON reader parses them (inferred types, before schema hints; the
  /// scan casts to the hinted types after parsing). Null: file_schema's data columns.
  std::shared_ptr<arrow::Schema> parse_schema;
  CsvOptions csv;
  io::S3Config s3;                         ///< for s3:// paths
  LanceOptions lance;                      ///< FileFormat::kLance only
  VideoScanOptions video;                  ///< FileFormat::kVideo only
  std::shared_ptr<const ScanTasks> tasks;  ///< set by MaterializeScanTasks; null before
  /// Parquet: the files' footers, each read at most once and shared by every copy of this scan
  /// (schema inference, each optimization, the readers). Null: read when needed, not kept.
  std::shared_ptr<io::ParquetFooters> footers;
};

}  // namespace ketch
