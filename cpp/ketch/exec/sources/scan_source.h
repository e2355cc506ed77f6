#pragma once

#include <arrow/util/thread_pool.h>

#include <atomic>
#include <set>

#include "ketch/exec/operator.h"
#include "ketch/exec/scan_metrics.h"
#include "ketch/io/formats/lance_format.h"
#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// Reads the scan tasks of a Parquet, CSV or JSON scan in order. Only the pushed-down columns (plus
/// those the pushed filter reads) are decoded; schema-hinted or evolved column types are cast; hive
/// partition columns are appended as constants; the pushed filter is applied to every batch and a
/// pushed limit stops reading once that many rows passed it. Parquet row groups are decoded up to
/// `parallel_tasks` at a time on `executor` and emitted in task order (so row numbers stay stable);
/// CSV and JSON files stream through Arrow's readers one after the other. Errors name the file.
///
/// Scan tasks (partitions): every emitted batch belongs to exactly one scan task, the `group` of
/// the ScanTask entries it was read for (0..num_tasks()-1, see ScanTasks), passed to `emit` as its
/// partition (and readable inside `emit` as `emitting_group()`). Batches come in task order, so
/// tasks never interleave; a task that yields no batch (an empty file) is announced by an empty
/// batch; after a pushed limit is reached nothing more is emitted. A task whose rows are all
/// filtered out emits empty batches. The row ranges of one split row group are read with one
/// fetch and decode of that row group, each range emitted as its own task (nothing is read twice).
///
/// Video (read_video_frames): one task per file. Up to `parallel_tasks` videos are open at once,
/// each decoded batch by batch on `executor` (files read on `io_executor`): the video being emitted
/// streams, the next ones decode at most two batches ahead, so memory holds a few batches per open
/// video, never a whole video. A batch is at most `target_batch_bytes` of frames (and at most
/// `batch_rows`); with a pushed limit (and no pushed filter) no more frames are asked of the
/// decoders than the limit still needs, so `limit(10)` decodes about 10 frames.
class ScanSource : public Source {
 public:
  /// `io_executor` (null: `executor`) opens video files; `target_batch_bytes` caps the decoded
  /// bytes of one video batch (frames per batch = target / bytes per frame, at least 1).
  ScanSource(ScanInfo info, std::shared_ptr<arrow::Schema> output_schema, int64_t batch_rows,
             arrow::internal::Executor* executor, int parallel_tasks,
             arrow::internal::Executor* io_executor = nullptr, int64_t target_batch_bytes = 32LL << 20);
  std::string name() const override { return "Scan" + FileFormatName(info_.format); }
  arrow::Status Produce(const Emit& emit) override;
  void set_scan_metrics(ScanMetrics* metrics) override { metrics_ = metrics; }
  /// Number of scan tasks (groups) this scan emits batches for (one per file when the optimizer
  /// made no tasks).
  int64_t num_tasks() const;
  /// The scan task (group) of the batch being emitted; valid inside `emit` (called on the thread
  /// running Produce), -1 before the first batch.
  int32_t emitting_group() const { return emitting_group_; }

 private:
  struct Piece {
    std::shared_ptr<arrow::RecordBatch> batch;
    int64_t first_row = 0;
    std::shared_ptr<arrow::Int64Array> source_rows;
    int32_t group = 0;
  };
  // The rows of one task entry within a read: rows [begin, end) of what the read decodes (end -1:
  // to the end), numbered from `first_row` (-1: the read's run-time base row).
  struct Segment {
    int64_t begin = 0;
    int64_t end = -1;
    int64_t first_row = -1;
    int32_t group = 0;
  };
  // One reader over a file: `task`'s row groups (or the whole CSV/JSON file), cut into segments.
  struct Read {
    ScanTask task;
    std::vector<Segment> segments;
    // Lance: the whole fragments after `task.file` that the same scanner reads (consecutive
    // entries of one scan task), so a task of many small fragments opens one Lance reader.
    std::vector<int32_t> more_files;
  };
  // Lance: joins consecutive whole-fragment reads of one scan task into one read.
  static std::vector<Read> JoinLanceReads(std::vector<Read> reads);
  // The reads of the task entries: consecutive row ranges of one row group become one read (the
  // row group is fetched and decoded once); `per_row_group` gives each whole row group its own
  // read (for decoding side by side).
  std::vector<Read> MakeReads(const std::vector<ScanTask>& tasks, bool per_row_group) const;
  // Counts a scan task as started the first time (metrics: tasks started).
  void MarkStarted(int32_t group);
  // Reads one read; `on_piece` gets each processed batch. `base_row` numbers its first row.
  arrow::Status ReadTask(const Read& read, int64_t base_row,
                         const std::function<arrow::Status(Piece)>& on_piece, int64_t* rows_read) const;
  arrow::Result<Piece> Process(const ScanTask& task, std::shared_ptr<arrow::RecordBatch> batch,
                               int64_t offset) const;
  arrow::Status ProduceSequential(const std::vector<Read>& reads, const Emit& emit);
  arrow::Status ProduceParallel(const std::vector<Read>& reads, const Emit& emit);
  arrow::Status ProduceVideo(const std::vector<Read>& reads, const Emit& emit);
  arrow::Status EmitPiece(Piece piece, const Emit& emit);
  // Emits an empty batch for each task after the last one emitted and before `group` (a task that
  // produced no batch, e.g. an empty file), so every partition number reaches the result in order.
  arrow::Status AnnounceTasksBefore(int32_t group, const Emit& emit);
  // The mask of a conjunct on one dictionary column: evaluated on the dictionary, then gathered.
  arrow::Result<std::shared_ptr<arrow::Array>> DictionaryMask(
      const Expr& conjunct, const std::string& name, const std::shared_ptr<arrow::Array>& column) const;
  bool LimitReached() const { return info_.limit >= 0 && rows_emitted_ >= info_.limit; }

  ScanInfo info_;
  std::shared_ptr<arrow::Schema> output_schema_;
  std::shared_ptr<arrow::Schema> data_schema_;  // file_schema without partition columns
  std::vector<std::string> read_columns_;       // data columns to decode
  std::set<std::string> filter_columns_;        // columns the pushed filter reads
  std::vector<ExprPtr> filter_conjuncts_;       // the pushed filter, applied conjunct by conjunct
  // Each conjunct with the one string column it reads when it may run on that column's dictionary
  // (null-propagating, cannot fail), else "". Dictionary ones run first; the rest in order.
  std::vector<std::pair<ExprPtr, std::string>> conjuncts_by_column_;
  std::set<std::string> decode_for_filter_;  // columns other conjuncts read: expanded before the filter
  std::string lance_filter_;        // Lance: the filter's translated conjuncts (Lance SQL); "" = none
  io::LanceReadStats lance_stats_;  // Lance: bytes its scanners reported reading
  int64_t batch_rows_;
  arrow::internal::Executor* executor_;
  int parallel_tasks_;
  arrow::internal::Executor* io_executor_;
  int64_t target_batch_bytes_;
  ScanMetrics own_metrics_;
  ScanMetrics* metrics_ = &own_metrics_;
  int64_t rows_emitted_ = 0;
  int32_t emitting_group_ = -1;
  std::vector<char> group_started_;                // per scan task: counted in the metrics yet
  mutable std::vector<std::atomic<bool>> opened_;  // per file: read yet (scan metrics)
  bool parallel_ = false;
};

/// The scan tasks when the optimizer made none: one per file, in order.
std::vector<ScanTask> DefaultScanTasks(const ScanInfo& info);

}  // namespace ketch
