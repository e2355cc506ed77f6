#include "ketch/exec/sources/scan_source.h"

#include <arrow/compute/api.h>
#include <arrow/util/future.h>

#include <condition_variable>
#include <ctime>
#include <deque>
#include <mutex>
#include <regex>
#include <set>

#include "ketch/common/exception_guard.h"
#include "ketch/exec/filter_rows.h"
#include "ketch/expr/expr_analysis.h"
#include "ketch/functions/media/video_scan.h"
#include "ketch/io/formats/lance_format.h"
#include "ketch/io/formats/parquet_footers.h"
#include "ketch/io/formats/parquet_format.h"
#include "ketch/io/formats/text_formats.h"
#include "ketch/io/formats/utf8_check.h"
#include "ketch/io/object_reader.h"
#include "ketch/io/redact.h"
#include "ketch/plan/logical/lance_filter.h"

namespace ketch {
namespace {

arrow::Status WithPath(const arrow::Status& st, const std::string& format, const std::string& path) {
  if (st.ok() || st.IsCancelled()) return st;
  return st.WithMessage("read_", format, ": file '", path, "': ", st.message());
}

int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Built only from comparisons, and/or/not, columns and literals: null in gives null out, and
// nothing raises, so the predicate may run on a dictionary's values instead of on every row.
bool NullPropagating(const Expr& expr) {
  static const std::set<std::string> kCalls = {"equal",      "not_equal", "less",
                                               "less_equal", "greater",   "greater_equal",
                                               "and_kleene", "or_kleene", "invert"};
  switch (expr.kind()) {
    case ExprKind::kColumn:
      return true;
    case ExprKind::kLiteral:
      // A Boolean constant under and/or decides rows by itself (null | true is true).
      return expr.literal()->is_valid && expr.literal()->type->id() != arrow::Type::BOOL;
    case ExprKind::kCall:
      if (!kCalls.count(expr.name())) return false;
      for (const auto& child : expr.children()) {
        if (!NullPropagating(*child)) return false;
      }
      return true;
    default:
      return false;
  }
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Array>> ScanSource::DictionaryMask(
    const Expr& conjunct, const std::string& name, const std::shared_ptr<arrow::Array>& column) const {
  const auto& dict = static_cast<const arrow::DictionaryArray&>(*column);
  std::shared_ptr<arrow::Array> values = dict.dictionary();
  const auto& want = data_schema_->GetFieldByName(name)->type();
  if (!values->type()->Equals(*want)) {
    ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(*values, want));
    values = std::move(cast);
  }
  auto batch =
      arrow::RecordBatch::Make(arrow::schema({arrow::field(name, want)}), values->length(), {values});
  ARROW_ASSIGN_OR_RAISE(auto value_mask, Evaluate(conjunct, *batch));
  // A null index (a null row) takes a null: the row is dropped, as the predicate on null would be.
  ARROW_ASSIGN_OR_RAISE(auto mask, arrow::compute::Take(value_mask, dict.indices()));
  return mask.make_array();
}

std::vector<ScanTask> DefaultScanTasks(const ScanInfo& info) {
  std::vector<ScanTask> tasks;
  for (size_t i = 0; i < info.files.size(); ++i) {
    ScanTask task;
    task.file = static_cast<int32_t>(i);
    task.size_bytes = info.files[i].size_bytes;
    task.group = static_cast<int32_t>(i);
    tasks.push_back(std::move(task));
  }
  return tasks;
}

ScanSource::ScanSource(ScanInfo info, std::shared_ptr<arrow::Schema> output_schema, int64_t batch_rows,
                       arrow::internal::Executor* executor, int parallel_tasks,
                       arrow::internal::Executor* io_executor, int64_t target_batch_bytes)
    : info_(std::move(info)),
      output_schema_(std::move(output_schema)),
      batch_rows_(batch_rows),
      executor_(executor),
      parallel_tasks_(std::max(1, parallel_tasks)),
      io_executor_(io_executor ? io_executor : executor),
      target_batch_bytes_(std::max<int64_t>(1, target_batch_bytes)) {
  const int num_data = info_.file_schema->num_fields() - info_.partition_schema->num_fields();
  arrow::FieldVector data_fields(info_.file_schema->fields().begin(),
                                 info_.file_schema->fields().begin() + num_data);
  data_schema_ = arrow::schema(data_fields);
  // Lance takes what it can of the filter; Ketch evaluates the rest (and re-checks float conjuncts).
  ExprPtr own_filter = info_.filter;
  if (info_.format == FileFormat::kLance && info_.filter) {
    auto translated = TranslateLanceFilter(info_.filter, *data_schema_);
    lance_filter_ = std::move(translated.sql);
    own_filter = nullptr;
    for (const auto& conjunct : translated.residual) {
      own_filter = own_filter ? Expr::Call("and_kleene", {own_filter, conjunct}) : conjunct;
    }
  }
  std::set<std::string> needed;
  for (const auto& field : output_schema_->fields()) needed.insert(field->name());
  if (own_filter) own_filter->CollectColumns(&needed);
  for (const auto& field : data_fields) {
    if (needed.count(field->name())) read_columns_.push_back(field->name());
  }
  // No data column is needed (count_rows, partition columns only): read the first for row counts.
  if (read_columns_.empty() && !data_fields.empty()) read_columns_.push_back(data_fields[0]->name());
  if (own_filter) {
    own_filter->CollectColumns(&filter_columns_);
    SplitConjuncts(own_filter, &filter_conjuncts_);
  }
  for (const auto& conjunct : filter_conjuncts_) {
    std::set<std::string> used;
    conjunct->CollectColumns(&used);
    const auto field = used.size() == 1 ? data_schema_->GetFieldByName(*used.begin()) : nullptr;
    if (field && arrow::is_base_binary_like(field->type()->id()) && NullPropagating(*conjunct)) {
      conjuncts_by_column_.emplace_back(conjunct, *used.begin());
    } else {
      conjuncts_by_column_.emplace_back(conjunct, "");
      decode_for_filter_.insert(used.begin(), used.end());
    }
  }
}

arrow::Result<ScanSource::Piece> ScanSource::Process(const ScanTask& task,
                                                     std::shared_ptr<arrow::RecordBatch> batch,
                                                     int64_t offset) const {
  const ScanFile& file = info_.files[task.file];
  // Data columns with the scan's types (schema hints, or a later file storing another width).
  arrow::FieldVector fields;
  arrow::ArrayVector columns;
  std::vector<std::string> deferred;  // dictionary columns expanded after the filter
  for (const auto& name : read_columns_) {
    ARROW_ASSIGN_OR_RAISE(auto column, GetColumn(*batch, name));
    const auto& want = data_schema_->GetFieldByName(name)->type();
    if (column->type()->id() == arrow::Type::DICTIONARY && arrow::is_base_binary_like(want->id()) &&
        !decode_for_filter_.count(name)) {
      deferred.push_back(name);
      fields.push_back(arrow::field(name, column->type()));
      columns.push_back(std::move(column));
      continue;
    }
    if (!column->type()->Equals(*want)) {
      auto cast = arrow::compute::Cast(*column, want);
      if (!cast.ok()) {
        const auto& held = column->type()->id() == arrow::Type::DICTIONARY
                               ? static_cast<const arrow::DictionaryType&>(*column->type()).value_type()
                               : column->type();
        return arrow::Status::TypeError("column '", name, "' holds ", held->ToString(),
                                        " values that do not convert to the scan's type ", want->ToString(),
                                        " (schema hint or first file): ", cast.status().message());
      }
      column = *cast;
    }
    fields.push_back(arrow::field(name, want));
    columns.push_back(std::move(column));
  }
  for (int i = 0; i < info_.partition_schema->num_fields(); ++i) {
    const auto& field = info_.partition_schema->field(i);
    ARROW_ASSIGN_OR_RAISE(auto column,
                          arrow::MakeArrayFromScalar(*file.partition_values[i], batch->num_rows()));
    fields.push_back(field);
    columns.push_back(std::move(column));
  }
  auto full = arrow::RecordBatch::Make(arrow::schema(fields), batch->num_rows(), columns);
  Piece piece;
  piece.first_row = offset;
  if (!filter_conjuncts_.empty()) {
    // Conjuncts on one dictionary column run on its (few) dictionary values, then map through
    // the indices; the others run row by row on what they keep.
    std::shared_ptr<arrow::Array> dict_mask;
    std::vector<ExprPtr>
        row_conjuncts;  // in the filter's order (a later one may fail on rows an earlier one drops)
    for (const auto& [conjunct, name] : conjuncts_by_column_) {
      auto column = name.empty() ? nullptr : full->GetColumnByName(name);
      if (!column || column->type()->id() != arrow::Type::DICTIONARY) {
        row_conjuncts.push_back(conjunct);
        continue;
      }
      ARROW_ASSIGN_OR_RAISE(auto mask, DictionaryMask(*conjunct, name, column));
      if (dict_mask) {
        ARROW_ASSIGN_OR_RAISE(auto both, arrow::compute::And(dict_mask, mask));
        dict_mask = both.make_array();
      } else {
        dict_mask = std::move(mask);
      }
    }
    EvalContext rows{offset, full->num_rows(), nullptr};
    bool dropped = false;
    if (dict_mask) {
      ARROW_ASSIGN_OR_RAISE(auto indices, arrow::compute::CallFunction("indices_nonzero", {dict_mask}));
      ARROW_ASSIGN_OR_RAISE(auto positions, arrow::compute::Cast(indices, arrow::int64()));
      if (positions.length() != full->num_rows()) {
        ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(full, positions));
        full = taken.record_batch();
        ARROW_ASSIGN_OR_RAISE(auto source, arrow::compute::Add(positions, arrow::Datum(offset)));
        rows.source_rows = std::static_pointer_cast<arrow::Int64Array>(source.make_array());
        rows.num_rows = full->num_rows();
        dropped = true;
      }
    }
    if (!row_conjuncts.empty()) {
      ARROW_ASSIGN_OR_RAISE(auto kept, FilterRows(row_conjuncts, full, rows));
      dropped |= kept.batch->num_rows() != full->num_rows();
      rows.source_rows = std::move(kept.source_rows);
      full = std::move(kept.batch);
    }
    if (dropped) piece.source_rows = std::move(rows.source_rows);
  }
  arrow::ArrayVector out;
  for (const auto& field : output_schema_->fields()) {
    ARROW_ASSIGN_OR_RAISE(auto column, GetColumn(*full, field->name()));
    if (column->type()->id() == arrow::Type::DICTIONARY && field->type()->id() != arrow::Type::DICTIONARY) {
      ARROW_ASSIGN_OR_RAISE(auto dense, arrow::compute::Cast(*column, field->type()));
      column = std::move(dense);
    }
    out.push_back(std::move(column));
  }
  piece.batch = arrow::RecordBatch::Make(output_schema_, full->num_rows(), std::move(out));
  return piece;
}

namespace {
const std::vector<std::shared_ptr<parquet::FileMetaData>> kNoMetadata;

// "... in row N" (N counted from the start of the block a reader parses) with N moved by the
// rows of the earlier blocks.
std::string RowsFromBlockStart(const std::string& message, int64_t block_start) {
  static const std::regex kRow(" in row ([0-9]+)");
  std::smatch match;
  if (block_start == 0 || !std::regex_search(message, match, kRow)) return message;
  const int64_t row = std::stoll(match[1].str()) + block_start;
  return match.prefix().str() + " in row " + std::to_string(row) + match.suffix().str();
}
}  // namespace

std::vector<ScanSource::Read> ScanSource::MakeReads(const std::vector<ScanTask>& tasks,
                                                    bool per_row_group) const {
  std::vector<Read> reads;
  for (const auto& task : tasks) {
    if (task.row_count >= 0 && task.row_groups.size() == 1) {
      // A row range of a split row group: the ranges before it in the same row group share its read.
      Segment segment{task.row_offset, task.row_offset + task.row_count, task.first_row, task.group};
      if (!reads.empty()) {
        Read& last = reads.back();
        const Segment& prev = last.segments.back();
        if (last.task.row_count >= 0 && last.task.file == task.file &&
            last.task.row_groups == task.row_groups && prev.end == task.row_offset) {
          last.segments.push_back(segment);
          continue;
        }
      }
      reads.push_back(Read{task, {segment}});
      continue;
    }
    // Split per row group only with the file's footer at hand (a deserialized plan fragment may
    // come without it: the entry is then one read, its footer read when the file is opened).
    const auto& all_metadata = info_.tasks ? info_.tasks->metadata : kNoMetadata;
    if (per_row_group && task.row_groups.size() > 1 && static_cast<size_t>(task.file) < all_metadata.size() &&
        all_metadata[task.file]) {
      const auto& metadata = all_metadata[task.file];
      int64_t first_row = task.first_row;
      for (int rg : task.row_groups) {
        ScanTask unit = task;
        unit.row_groups = {rg};
        unit.first_row = first_row;
        unit.num_rows = metadata->RowGroup(rg)->num_rows();
        first_row += unit.num_rows;
        reads.push_back(Read{unit, {Segment{0, -1, unit.first_row, task.group}}});
      }
      continue;
    }
    reads.push_back(Read{task, {Segment{0, -1, task.first_row, task.group}}});
  }
  return reads;
}

std::vector<ScanSource::Read> ScanSource::JoinLanceReads(std::vector<Read> reads) {
  std::vector<Read> out;
  for (auto& read : reads) {
    const bool whole = read.task.row_count < 0 && read.segments.size() == 1;
    if (!out.empty() && whole) {
      Read& last = out.back();
      if (last.task.row_count < 0 && last.segments.size() == 1 && last.task.group == read.task.group) {
        last.more_files.push_back(read.task.file);
        continue;
      }
    }
    out.push_back(std::move(read));
  }
  return out;
}

void ScanSource::MarkStarted(int32_t group) {
  if (group < 0 || static_cast<size_t>(group) >= group_started_.size() || group_started_[group]) return;
  group_started_[group] = 1;
  metrics_->scan_tasks++;
}

int64_t ScanSource::num_tasks() const {
  return info_.tasks ? info_.tasks->num_tasks() : static_cast<int64_t>(info_.files.size());
}

arrow::Status ScanSource::ReadTask(const Read& read, int64_t base_row,
                                   const std::function<arrow::Status(Piece)>& on_piece,
                                   int64_t* rows_read) const {
  const ScanTask& task = read.task;
  const ScanFile& file = info_.files[task.file];
  if (!opened_[task.file].exchange(true)) metrics_->files_read++;  // a file counts once, when first read
  for (int32_t more : read.more_files) {
    if (!opened_[more].exchange(true)) metrics_->files_read++;
  }
  std::string fragment_names = std::to_string(file.fragment_id);
  for (int32_t more : read.more_files) fragment_names += ", " + std::to_string(info_.files[more].fragment_id);
  std::shared_ptr<arrow::RecordBatchReader> reader;
  int64_t offset = 0;  // position of the next row within the read (row group or fragment)
  switch (info_.format) {
    case FileFormat::kParquet: {
      std::shared_ptr<parquet::FileMetaData> metadata;
      if (info_.tasks && static_cast<size_t>(task.file) < info_.tasks->metadata.size()) {
        metadata = info_.tasks->metadata[task.file];
      }
      if (!metadata) {
        // Not planned (scan tasks off): the footer is read now, once, through the scan's cache.
        ARROW_ASSIGN_OR_RAISE(
            metadata, info_.footers ? info_.footers->Get(task.file, file.path, file.size_bytes, info_.s3)
                                    : io::ReadParquetMetadata(file.path, info_.s3, file.size_bytes));
      }
      std::vector<int> row_groups = task.row_groups;
      if (row_groups.empty() && !info_.tasks) {
        for (int i = 0; i < metadata->num_row_groups(); ++i) row_groups.push_back(i);
      }
      metrics_->row_groups_read += static_cast<int64_t>(row_groups.size());
      ARROW_ASSIGN_OR_RAISE(
          reader, io::OpenParquetRowGroups(file.path, info_.s3, file.size_bytes, metadata, row_groups,
                                           read_columns_, batch_rows_, !parallel_, &metrics_->bytes_read,
                                           /*read_dictionaries=*/true));
      break;
    }
    case FileFormat::kCsv: {
      ARROW_ASSIGN_OR_RAISE(reader, io::OpenCsv(file.path, info_.csv, data_schema_, read_columns_, info_.s3,
                                                &metrics_->bytes_read));
      break;
    }
    case FileFormat::kJson: {
      ARROW_ASSIGN_OR_RAISE(reader,
                            io::OpenJson(file.path, info_.parse_schema ? info_.parse_schema : data_schema_,
                                         read_columns_, info_.s3, &metrics_->bytes_read));
      break;
    }
    case FileFormat::kLance: {
      io::LanceReadRequest request;
      request.uri = info_.lance.uri;
      request.version = info_.lance.version;
      request.fragment_ids = {file.fragment_id};
      for (int32_t more : read.more_files) request.fragment_ids.push_back(info_.files[more].fragment_id);
      request.columns = read_columns_;
      request.filter = lance_filter_;
      request.storage_options = info_.lance.storage_options;
      if (info_.lance.nearest) {
        // One read for the whole version (the task's only entry): Lance's k nearest rows.
        request.nearest = info_.lance.nearest;
        auto opened = io::OpenLance(request, lance_stats_);
        if (!opened.ok()) {
          return opened.status().WithMessage("nearest-neighbour search on '", info_.lance.nearest->column,
                                             "': ", opened.status().message());
        }
        reader = std::move(*opened);
        break;
      }
      // Lance's limit counts rows after its filter: only exact when Ketch filters nothing more.
      const bool exact = filter_conjuncts_.empty();
      if (task.row_count >= 0) {
        // Row ranges of a fragment (planned only without a filter): one Lance read from the first
        // range's start to the last one's end, cut into the ranges below.
        request.offset = read.segments.front().begin;
        request.limit = read.segments.back().end - request.offset;
        offset = request.offset;
      }
      if (exact && info_.limit >= 0) {
        // Lance fragments are read one after the other (never side by side): what earlier reads
        // emitted counts against the limit.
        const int64_t remaining = std::max<int64_t>(0, info_.limit - rows_emitted_);
        request.limit = request.limit < 0 ? remaining : std::min(request.limit, remaining);
      }
      auto opened = io::OpenLance(request, lance_stats_);
      if (!opened.ok()) {
        return opened.status().WithMessage("fragments [", fragment_names, "]: ", opened.status().message());
      }
      reader = std::move(*opened);
      break;
    }
    case FileFormat::kVideo:  // ProduceVideo decodes videos itself
      return arrow::Status::NotImplemented("video files are read by ProduceVideo");
  }
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    auto next = reader->ReadNext(&batch);
    if (!next.ok() && info_.format == FileFormat::kJson) {
      // Arrow's JSON reader counts rows from the start of the block it parses (one block per
      // batch): name the row of the file instead.
      return next.WithMessage(RowsFromBlockStart(next.message(), offset));
    }
    if (!next.ok() && info_.format == FileFormat::kLance) {
      return next.WithMessage("fragments [", fragment_names, "]: ", next.message());
    }
    if (!next.ok() && !task.row_groups.empty()) {
      // Name the row groups the failing read covered.
      const int first = task.row_groups.front(), last = task.row_groups.back();
      return next.WithMessage(first == last
                                  ? "row group " + std::to_string(first)
                                  : "row groups " + std::to_string(first) + ".." + std::to_string(last),
                              ": ", next.message());
    }
    ARROW_RETURN_NOT_OK(next);
    if (!batch) break;
    const int64_t rows = batch->num_rows();
    if (info_.format == FileFormat::kParquet) {
      // Arrow's Parquet reader does not check that strings are UTF-8; an invalid one would reach
      // generated JSON and text. Fail naming the file, the column and the row.
      if (auto bad = io::FindInvalidUtf8(*batch)) {
        return arrow::Status::Invalid(
            "invalid UTF-8 in string column '", batch->schema()->field(bad->column)->name(),
            "' at source row ", base_row + offset + bad->row, " (read it as binary, or repair the file)");
      }
    }
    metrics_->rows_read += rows;
    // Cut the batch at the segments' bounds: each part is processed (filtered) with its own row
    // numbers and belongs to its segment's task. Rows outside every segment are dropped.
    int64_t read_end = 0;  // where the last segment ends; -1 = the end of the read
    for (const auto& segment : read.segments) {
      read_end = segment.end < 0 || read_end < 0 ? -1 : std::max(read_end, segment.end);
      const int64_t begin = std::max(offset, segment.begin);
      const int64_t end = segment.end < 0 ? offset + rows : std::min(offset + rows, segment.end);
      if (begin >= end && !(rows == 0 && segment.end < 0)) continue;
      auto part = begin == offset && end == offset + rows ? batch : batch->Slice(begin - offset, end - begin);
      const int64_t first_row =
          (segment.first_row >= 0 ? segment.first_row : base_row) + (begin - segment.begin);
      ARROW_ASSIGN_OR_RAISE(auto piece, Process(task, std::move(part), first_row));
      piece.group = segment.group;
      ARROW_RETURN_NOT_OK(on_piece(std::move(piece)));
    }
    offset += rows;
    if (read_end >= 0 && offset >= read_end) break;  // the rest of the row group is in no segment
  }
  if (info_.format == FileFormat::kLance) metrics_->bytes_read += lance_stats_.bytes_read->exchange(0);
  *rows_read = offset;
  return arrow::Status::OK();
}

arrow::Status ScanSource::AnnounceTasksBefore(int32_t group, const Emit& emit) {
  for (int32_t skipped = emitting_group_ + 1; skipped < group; ++skipped) {
    ARROW_ASSIGN_OR_RAISE(auto empty, arrow::RecordBatch::MakeEmpty(output_schema_));
    emitting_group_ = skipped;
    ARROW_RETURN_NOT_OK(emit(std::move(empty), 0, nullptr, skipped));
  }
  return arrow::Status::OK();
}

arrow::Status ScanSource::EmitPiece(Piece piece, const Emit& emit) {
  if (LimitReached()) return arrow::Status::OK();
  rows_emitted_ += piece.batch->num_rows();
  ARROW_RETURN_NOT_OK(AnnounceTasksBefore(piece.group, emit));
  emitting_group_ = piece.group;
  MarkStarted(piece.group);  // a later range of a row group read once starts when it emits
  return emit(std::move(piece.batch), piece.first_row, std::move(piece.source_rows), piece.group);
}

arrow::Status ScanSource::ProduceSequential(const std::vector<Read>& reads, const Emit& emit) {
  int64_t next_row = 0;
  for (const auto& read : reads) {
    if (LimitReached()) break;
    MarkStarted(read.segments.front().group);
    const ScanTask& task = read.task;
    const int64_t base = task.first_row >= 0 ? task.first_row - task.row_offset : next_row;
    int64_t rows = 0;
    auto st = ReadTask(
        read, base,
        [&](Piece piece) -> arrow::Status {
          ARROW_RETURN_NOT_OK(EmitPiece(std::move(piece), emit));
          // Stop decoding once the pushed limit is reached.
          if (LimitReached()) return arrow::Status::Cancelled("limit reached");
          return arrow::Status::OK();
        },
        &rows);
    if (st.IsCancelled()) return st;
    ARROW_RETURN_NOT_OK(WithPath(st, Lower(FileFormatName(info_.format)), info_.files[task.file].path));
    next_row = base + rows;
  }
  return arrow::Status::OK();
}

arrow::Status ScanSource::ProduceParallel(const std::vector<Read>& tasks, const Emit& emit) {
  // Decoding goes row group by row group (MakeReads gave each its own read), up to
  // `parallel_tasks_` of them on the executor ahead of the one being emitted: memory holds a few
  // decoded row groups, not whole tasks. Every submitted read is waited for before returning
  // (they read `this`).
  using Output = std::vector<Piece>;
  std::deque<std::pair<size_t, arrow::Future<Output>>> in_flight;
  size_t next = 0;
  std::atomic<bool> stop{false};
  auto submit = [&](size_t i) -> arrow::Status {
    MarkStarted(tasks[i].segments.front().group);  // counted when started (a limit may stop early)
    ARROW_ASSIGN_OR_RAISE(auto future, executor_->Submit([this, &tasks, &stop, i]() -> arrow::Result<Output> {
      return GuardExceptions("scan task", [&]() -> arrow::Result<Output> {
        Output out;
        if (stop.load()) return out;
        const int64_t cpu_start = ThreadCpuNs();
        int64_t rows = 0;
        const ScanTask& task = tasks[i].task;
        ARROW_RETURN_NOT_OK(ReadTask(
            tasks[i], task.first_row >= 0 ? task.first_row - task.row_offset : 0,
            [&](Piece piece) {
              out.push_back(std::move(piece));
              return arrow::Status::OK();
            },
            &rows));
        metrics_->decode_cpu_ns += ThreadCpuNs() - cpu_start;
        return out;
      });
    }));
    in_flight.emplace_back(i, std::move(future));
    return arrow::Status::OK();
  };
  arrow::Status status;
  while (status.ok()) {
    while (status.ok() && next < tasks.size() && in_flight.size() < static_cast<size_t>(parallel_tasks_) &&
           !LimitReached()) {
      status = submit(next++);
    }
    if (!status.ok() || in_flight.empty()) break;
    auto [index, future] = std::move(in_flight.front());
    in_flight.pop_front();
    const auto& result = future.result();
    if (!result.ok()) {
      status = WithPath(result.status(), Lower(FileFormatName(info_.format)),
                        info_.files[tasks[index].task.file].path);
      break;
    }
    for (const auto& piece : *result) {
      if (LimitReached()) break;
      status = EmitPiece(piece, emit);
      if (!status.ok()) break;
    }
  }
  stop = true;
  for (auto& [index, future] : in_flight) future.Wait();
  return status;
}

arrow::Status ScanSource::ProduceVideo(const std::vector<Read>& reads, const Emit& emit) {
  // One open video: its decoder and the batches decoded ahead of emission. Everything but
  // `stream` is guarded by `mutex`; `stream` is touched only by the one task running for the
  // video (`busy`), or by nobody.
  struct Run {
    const Read* read = nullptr;
    std::unique_ptr<media::VideoFrameStream> stream;
    std::deque<std::shared_ptr<arrow::RecordBatch>> ready;
    int64_t frames_per_batch = 1;
    int64_t promised = 0;  // frames asked of the decoder or decoded, not yet emitted (capped)
    int64_t frames_counted = 0;
    int64_t packets_counted = 0;
    bool busy = false;
    bool finished = false;
    arrow::Status error;
  };
  constexpr size_t kLookahead = 2;  // batches a video decodes ahead of the one being emitted
  // A pushed limit counts rows after a pushed filter: frames are capped only without one.
  const bool capped = info_.limit >= 0 && filter_conjuncts_.empty();
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::unique_ptr<Run>> window;  // the open videos, the one being emitted first
  int64_t active = 0;                       // tasks spawned and not yet done
  int64_t promised = 0;                     // Run::promised over all runs
  int64_t emitted = 0;                      // rows emitted (capped)
  std::atomic<bool> stop{false};
  // Fewer videos than decoding slots (one long video): the codecs use the idle slots as threads.
  const int decoder_threads = std::max<int>(
      1, parallel_tasks_ / static_cast<int>(std::clamp<size_t>(reads.size(), 1, parallel_tasks_)));

  // Starts the next step of `run` (open, or decode one batch) when it has room; `mutex` held.
  std::function<void(Run*)> schedule = [&](Run* run) {
    if (stop.load() || run->busy || run->finished || !run->error.ok() || run->ready.size() >= kLookahead) {
      return;
    }
    const bool open = run->stream == nullptr;
    int64_t want = run->frames_per_batch;
    if (capped && !open) {
      // The video being emitted may always ask for what the limit still needs; the ones behind it
      // only for what no other video has been asked for (they may never be reached).
      const bool head = !window.empty() && window.front().get() == run;
      want = std::min(want, info_.limit - emitted - (head ? run->promised : promised));
      if (want <= 0) return;
      run->promised += want;
      promised += want;
    }
    run->busy = true;
    ++active;
    auto task = [&, run, open, want]() {
      const int64_t cpu_start = ThreadCpuNs();
      const ScanFile& file = info_.files[run->read->task.file];
      std::shared_ptr<arrow::RecordBatch> batch;
      arrow::Status status;
      if (stop.load()) {
        status = arrow::Status::Cancelled("scan stopped");
      } else if (open) {
        // The object's bytes are read whole, once (as the media kernels read them); streaming the
        // compressed bytes through a custom AVIOContext over ranged reads is left for later.
        auto bytes = io::ReadObject(file.path, info_.s3);
        if (!opened_[run->read->task.file].exchange(true)) metrics_->files_read++;
        if (bytes.ok()) {
          metrics_->bytes_read += (*bytes)->size();
          const ScanTask& task = run->read->task;
          auto opened =
              media::VideoFrameStream::Open(file.path, std::move(*bytes), info_.video, read_columns_, &stop,
                                            decoder_threads, task.range_index, task.range_count);
          if (opened.ok()) {
            run->stream = std::move(*opened);
          } else {
            status = opened.status();
          }
        } else {
          status = bytes.status();
        }
      } else {
        auto next = run->stream->Next(want);
        if (next.ok()) {
          batch = std::move(*next);
          if (batch) metrics_->rows_read += batch->num_rows();
        } else {
          status = next.status();
        }
        const int64_t decoded = run->stream->decoded_frames();
        metrics_->frames_decoded += decoded - run->frames_counted;
        run->frames_counted = decoded;
        const int64_t dropped = run->stream->dropped_packets();
        metrics_->packets_dropped += dropped - run->packets_counted;
        run->packets_counted = dropped;
        metrics_->decode_cpu_ns += ThreadCpuNs() - cpu_start;
      }
      std::lock_guard<std::mutex> lock(mutex);
      run->busy = false;
      --active;
      if (!status.ok()) {
        run->error = std::move(status);
      } else if (open) {
        run->frames_per_batch = std::clamp<int64_t>(target_batch_bytes_ / run->stream->row_bytes(), 1,
                                                    std::max<int64_t>(1, batch_rows_));
      } else {
        const int64_t rows = batch ? batch->num_rows() : 0;
        if (capped) {  // frames asked for but not decoded are no longer promised
          run->promised -= want - rows;
          promised -= want - rows;
        }
        if (batch) {
          run->ready.push_back(std::move(batch));
        } else {
          run->finished = true;
        }
      }
      schedule(run);  // its next batch, or its first after opening
      changed.notify_all();
    };
    auto* pool = open ? io_executor_ : executor_;
    auto spawned = pool->Spawn(std::move(task));
    if (!spawned.ok()) {
      run->busy = false;
      --active;
      run->error = spawned;
    }
  };

  arrow::Status status;
  int64_t next_row = 0;
  size_t next = 0;
  std::unique_lock<std::mutex> lock(mutex);
  while (true) {
    while (window.size() < static_cast<size_t>(parallel_tasks_) && next < reads.size() && !LimitReached()) {
      auto run = std::make_unique<Run>();
      run->read = &reads[next++];
      MarkStarted(run->read->segments.front().group);
      window.push_back(std::move(run));
    }
    if (window.empty()) break;
    for (auto& run : window) schedule(run.get());
    Run* head = window.front().get();
    changed.wait(lock, [&] { return !head->ready.empty() || !head->error.ok() || head->finished; });
    if (!head->error.ok()) {
      status = head->error;
      if (!status.IsCancelled()) {
        status = status.WithMessage("read_video_frames: file '", info_.files[head->read->task.file].path,
                                    "': ", status.message());
      }
      break;
    }
    if (head->ready.empty()) {  // finished
      window.pop_front();
      continue;
    }
    auto batch = std::move(head->ready.front());
    head->ready.pop_front();
    schedule(head);  // the next batch decodes while this one is emitted
    lock.unlock();
    const int64_t rows = batch->num_rows();
    auto piece = Process(head->read->task, std::move(batch), next_row);
    next_row += rows;
    arrow::Status emitted_status = piece.status();
    if (piece.ok()) {
      piece->group = head->read->segments.front().group;
      emitted_status = EmitPiece(std::move(*piece), emit);
    }
    lock.lock();
    if (capped) {
      head->promised -= rows;
      promised -= rows;
      emitted += rows;
    }
    if (!emitted_status.ok()) {
      status = emitted_status;
      break;
    }
    if (LimitReached()) break;
  }
  stop = true;
  changed.wait(lock, [&] { return active == 0; });
  return status;
}

arrow::Status ScanSource::Produce(const Emit& emit) {
  std::vector<ScanTask> tasks = info_.tasks ? info_.tasks->tasks : DefaultScanTasks(info_);
  if (info_.tasks) {
    metrics_->files_pruned += info_.tasks->files_pruned;
    metrics_->row_groups_pruned += info_.tasks->row_groups_pruned;
  }
  opened_ = std::vector<std::atomic<bool>>(info_.files.size());
  group_started_.assign(static_cast<size_t>(std::max<int64_t>(num_tasks(), 0)), 0);
  emitting_group_ = -1;
  arrow::Status st;
  std::vector<Read> reads =
      MakeReads(tasks, /*per_row_group=*/info_.format == FileFormat::kParquet && info_.tasks);
  if (info_.format == FileFormat::kVideo) {
    st = ProduceVideo(MakeReads(tasks, /*per_row_group=*/false), emit);
  } else if (info_.format == FileFormat::kParquet && info_.tasks && reads.size() > 1 && parallel_tasks_ > 1) {
    parallel_ = true;  // row groups decode side by side, each single-threaded
    st = ProduceParallel(reads, emit);
  } else {
    if (reads.size() > 1) reads = MakeReads(tasks, /*per_row_group=*/false);  // one reader per entry
    if (info_.format == FileFormat::kLance) reads = JoinLanceReads(std::move(reads));
    st = ProduceSequential(reads, emit);
  }
  if (st.IsCancelled()) return arrow::Status::OK();
  // Tasks after the last batch that emitted nothing (an empty file) are still announced.
  if (st.ok() && !LimitReached()) st = AnnounceTasksBefore(static_cast<int32_t>(num_tasks()), emit);
  if (tasks.empty()) {
    // Every file or row group was pruned: one empty batch still carries the schema.
    ARROW_ASSIGN_OR_RAISE(auto empty, arrow::RecordBatch::MakeEmpty(output_schema_));
    return emit(empty, 0, nullptr, 0);
  }
  return st;
}

}  // namespace ketch
