// The ordered re-chunk steps of a pipeline run: morsels cut to a row range, into exact batches,
// or into partitions known before the input runs (PipelineRun's re-chunk methods).

#include "ketch/exec/pipeline_run.h"

namespace ketch::exec {

// Re-chunk step (under the segment's lock). Buffered morsels hold no in-flight permit (else the
// source could not send the rows that complete a batch); an output takes over the permit of the
// morsel that completed it, so the morsels in flight behind the step stay bounded.
void PipelineRun::RechunkPush(Segment& segment, Morsel morsel, std::vector<Morsel>* forward,
                              int64_t* released) {
  Rechunk& r = *segment.rechunk;
  if (!morsel.batch || !error_ok()) {
    *released += morsel.permits;
    return;
  }
  if (r.cuts) {
    CutIntoPartitions(segment, std::move(morsel), forward, released);
    return;
  }
  // Rows of another partition: what is buffered goes on first, as the last morsel(s) of its own.
  const bool new_partition = !r.into_batches && morsel.partition != r.partition;
  if (new_partition && r.buffered_rows > 0) RechunkFlush(segment, forward);
  if (morsel.batch->num_rows() == 0) {
    // An empty input still carries the schema through when nothing went on before it, and an
    // empty partition its number.
    if ((r.buffer.empty() && segment.next_out_seq == 0) || new_partition) {
      morsel.seq = segment.next_out_seq++;
      if (r.into_batches) morsel.partition = 0;
      r.partition = morsel.partition;
      forward->push_back(std::move(morsel));
    } else {
      *released += morsel.permits;
    }
    return;
  }
  r.partition = morsel.partition;
  int64_t permits = morsel.permits;
  morsel.permits = 0;
  r.buffered_rows += morsel.batch->num_rows();
  r.buffered_bytes += BatchBytes(*morsel.batch);
  r.buffer.push_back(std::move(morsel));
  // Under memory pressure (the buffer holds a quarter of the budget) a short morsel goes on
  // rather than waiting for min_rows: the source may be waiting for those very bytes.
  const int64_t max_rows = RechunkMaxRows(segment);
  while (r.buffered_rows >= r.min_rows ||
         (!r.into_batches && r.buffered_rows > 0 && r.buffered_bytes > memory_->budget() / 4)) {
    auto out = CutRechunk(r, std::min(r.buffered_rows, max_rows));
    if (!out.ok()) {
      Fail(out.status());
      break;
    }
    out->seq = segment.next_out_seq++;
    out->permits = permits;
    permits = 0;
    if (stats_) Count(sink_metrics_[SegmentIndex(segment)], out->batch->num_rows(), out->batch);
    forward->push_back(std::move(*out));
  }
  *released += permits;
}

// Streaming into_partitions: sends an empty batch for each output partition before `upto` that
// has had none (an empty piece, or coalesced inputs without rows), so every output exists.
void PipelineRun::BeginOutputsUpTo(Segment& segment, int64_t upto, std::vector<Morsel>* forward) {
  Rechunk& r = *segment.rechunk;
  while (r.started < upto) {
    auto empty = arrow::RecordBatch::MakeEmpty(r.schema);
    if (!empty.ok()) {
      Fail(empty.status());
      return;
    }
    Morsel out;
    out.seq = segment.next_out_seq++;
    out.batch = std::move(*empty);
    out.permits = 0;
    out.partition = r.started++;
    forward->push_back(std::move(out));
  }
}

// Streaming into_partitions: the morsel's rows cut at the pieces of its input partition, each
// slice labelled with its output partition (zero-copy); the morsel's permit and memory go with
// its last slice.
void PipelineRun::CutIntoPartitions(Segment& segment, Morsel morsel, std::vector<Morsel>* forward,
                                    int64_t* released) {
  Rechunk& r = *segment.rechunk;
  const IntoPartitionsCuts& cuts = *r.cuts;
  const int64_t p = morsel.partition;
  if (p < 0 || p >= static_cast<int64_t>(cuts.pieces.size())) {
    Fail(arrow::Status::Invalid("into_partitions: input partition ", p, " was not planned (",
                                cuts.pieces.size(), " input partitions)"));
    *released += morsel.permits;
    return;
  }
  if (p != r.in_partition) {
    r.in_partition = p;
    r.piece = 0;
    r.filled = 0;
  }
  const auto& pieces = cuts.pieces[static_cast<size_t>(p)];
  const int64_t rows = morsel.batch->num_rows();
  std::vector<std::pair<int64_t, int64_t>> slices;  // (offset, length) per output partition
  std::vector<int64_t> outputs;
  int64_t offset = 0;
  while (offset < rows) {
    int64_t take = rows - offset;
    if (pieces[r.piece] != IntoPartitionsCuts::kAllRows) {
      while (r.piece < pieces.size() && pieces[r.piece] == r.filled) {
        ++r.piece;
        r.filled = 0;
      }
      if (r.piece >= pieces.size()) {
        Fail(arrow::Status::Invalid("into_partitions: input partition ", p,
                                    " has more rows than its known count"));
        *released += morsel.permits;
        return;
      }
      take = std::min(take, pieces[r.piece] - r.filled);
    }
    slices.emplace_back(offset, take);
    outputs.push_back(cuts.first[static_cast<size_t>(p)] + static_cast<int64_t>(r.piece));
    r.filled += take;
    offset += take;
  }
  for (size_t k = 0; k < slices.size(); ++k) {
    const auto [start, length] = slices[k];
    BeginOutputsUpTo(segment, outputs[k], forward);
    Morsel out;
    out.seq = segment.next_out_seq++;
    out.batch = length == rows ? morsel.batch : morsel.batch->Slice(start, length);
    out.rows = EvalContext{morsel.rows.row_offset + start, length, nullptr};
    if (morsel.rows.source_rows) {
      out.rows.source_rows =
          std::static_pointer_cast<arrow::Int64Array>(morsel.rows.source_rows->Slice(start, length));
    }
    out.partition = outputs[k];
    r.started = std::max(r.started, outputs[k] + 1);
    const bool last = k + 1 == slices.size();
    out.permits = last ? morsel.permits : 0;
    if (last) out.memory = std::move(morsel.memory);
    if (stats_) Count(sink_metrics_[SegmentIndex(segment)], length, out.batch);
    forward->push_back(std::move(out));
  }
  if (slices.empty()) *released += morsel.permits;  // an empty morsel
}

// At the end of the input, sends on what the re-chunk step still holds (fewer than min rows).
void PipelineRun::RechunkFlush(Segment& segment, std::vector<Morsel>* forward) {
  Rechunk& r = *segment.rechunk;
  if (r.cuts) {
    BeginOutputsUpTo(segment, r.cuts->num_outputs, forward);
    return;
  }
  const int64_t max_rows = RechunkMaxRows(segment);
  while (r.buffered_rows > 0 && error_ok()) {
    auto out = CutRechunk(r, std::min(r.buffered_rows, max_rows));
    if (!out.ok()) {
      Fail(out.status());
      break;
    }
    out->seq = segment.next_out_seq++;
    out->permits = 0;
    if (stats_) Count(sink_metrics_[SegmentIndex(segment)], out->batch->num_rows(), out->batch);
    forward->push_back(std::move(*out));
  }
  r.buffer.clear();
  r.buffered_rows = 0;
  r.buffered_bytes = 0;
}

// A re-chunk step feeds the next segment; exact batches (a UDF's batch_size) are never cut.
int64_t PipelineRun::RechunkMaxRows(const Segment& segment) const {
  const Rechunk& r = *segment.rechunk;
  if (r.min_rows > 1 || r.into_batches) return r.max_rows;
  return AdaptiveRows(SegmentIndex(segment) + 1, r.max_rows);
}

size_t PipelineRun::SegmentIndex(const Segment& segment) const {
  for (size_t i = 0; i < pipeline_->segments.size(); ++i) {
    if (pipeline_->segments[i].get() == &segment) return i;
  }
  return 0;
}

// Takes the first `rows` buffered rows as one morsel (zero-copy when they lie in one morsel).
arrow::Result<Morsel> PipelineRun::CutRechunk(Rechunk& r, int64_t rows) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> pieces;
  std::vector<EvalContext> contexts;
  int64_t remaining = rows;
  while (remaining > 0) {
    Morsel& front = r.buffer.front();
    const int64_t available = front.batch->num_rows() - r.front_offset;
    const int64_t take = std::min(available, remaining);
    pieces.push_back(front.batch->Slice(r.front_offset, take));
    EvalContext ctx{front.rows.row_offset + r.front_offset, take, nullptr};
    if (front.rows.source_rows) {
      ctx.source_rows =
          std::static_pointer_cast<arrow::Int64Array>(front.rows.source_rows->Slice(r.front_offset, take));
    }
    contexts.push_back(std::move(ctx));
    remaining -= take;
    r.buffered_rows -= take;
    if (take == available) {
      r.buffered_bytes -= BatchBytes(*front.batch);
      r.buffer.pop_front();  // releases its memory permit
      r.front_offset = 0;
    } else {
      r.front_offset += take;
    }
  }
  Morsel out;
  if (pieces.size() == 1) {
    out.batch = std::move(pieces[0]);
    out.rows = std::move(contexts[0]);
  } else {
    ARROW_ASSIGN_OR_RAISE(out.batch, arrow::ConcatenateRecordBatches(pieces));
    arrow::Int64Builder source_rows;
    ARROW_RETURN_NOT_OK(source_rows.Reserve(rows));
    for (const auto& ctx : contexts) {
      for (int64_t i = 0; i < ctx.num_rows; ++i) source_rows.UnsafeAppend(ctx.SourceRow(i));
    }
    std::shared_ptr<arrow::Int64Array> array;
    ARROW_RETURN_NOT_OK(source_rows.Finish(&array));
    out.rows = EvalContext{contexts[0].row_offset, rows, std::move(array)};
  }
  out.rows.num_rows = rows;
  out.partition = r.into_batches ? r.next_batch++ : r.partition;
  out.memory = memory_->Reserve(BatchBytes(*out.batch));
  return out;
}

}  // namespace ketch::exec
