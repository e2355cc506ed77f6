#pragma once

// The runtime shape of a pipeline (executor.cc): morsels, the ordered re-chunk steps, the
// segments (stateless operators ending in a sink or a re-chunk) and the pipelines that feed others.
// Built by PipelineBuilder (pipeline_builder.h), run by PipelineRun (pipeline_run.h).

#include <arrow/util/byte_size.h>
#include <time.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <semaphore>

#include "ketch/common/exception_guard.h"
#include "ketch/common/memory_manager.h"
#include "ketch/common/query_scope.h"
#include "ketch/common/thread_pools.h"
#include "ketch/exec/blocking/cross_join.h"
#include "ketch/exec/blocking/hash_aggregate.h"
#include "ketch/exec/blocking/hash_join.h"
#include "ketch/exec/blocking/into_partitions.h"
#include "ketch/exec/blocking/repartition.h"
#include "ketch/exec/blocking/sample_size.h"
#include "ketch/exec/blocking/sort_merge.h"
#include "ketch/exec/blocking/sort_sink.h"
#include "ketch/exec/blocking/top_n.h"
#include "ketch/exec/blocking/window_sink.h"
#include "ketch/exec/executor.h"
#include "ketch/exec/intermediate/explode.h"
#include "ketch/exec/intermediate/project.h"
#include "ketch/exec/morsel.h"
#include "ketch/exec/sinks/sinks.h"
#include "ketch/exec/sinks/write_sink.h"
#include "ketch/exec/sources/in_memory_source.h"
#include "ketch/exec/sources/materialized_source.h"
#include "ketch/exec/sources/scan_source.h"
#include "ketch/exec/streaming_operator.h"
#include "ketch/io/spill_file.h"
#include "ketch/plan/physical/into_partitions_cuts.h"

namespace ketch::exec {

struct Morsel {
  int64_t seq = 0;
  std::shared_ptr<arrow::RecordBatch> batch;
  EvalContext rows;       // which source rows the morsel holds
  MemoryPermit memory;    // the morsel's bytes, charged to the query's budget while in flight
  int64_t permits = 1;    // in-flight permits it carries (0 for extra pieces of a split morsel)
  int64_t partition = 0;  // the partition its rows belong to (Source::Emit)
  // A streaming operator (a lazy generator) turns one morsel into pieces: they share its `seq`,
  // are numbered by `sub` and reach the segment's end in that order; the last has `last_sub`.
  int64_t sub = 0;
  bool last_sub = true;
  // Pieces of the stream not yet through the segment's re-order buffer (the stream's own count).
  std::shared_ptr<std::atomic<int64_t>> stream_pending;
};

/// The state of an ordered re-chunk step: morsels arrive in source order and leave cut to
/// [min_rows, max_rows] rows (the last one of the input may be shorter). Rows of different
/// partitions never share a morsel (a partition's last morsel may be shorter), except in
/// `into_batches` mode, which cuts the whole stream into batches of exactly `max_rows` rows (only
/// the stream's last one shorter) and makes each batch a partition of its own (0, 1, 2, ...).
struct Rechunk {
  int64_t min_rows = 1;
  int64_t max_rows = 0;
  bool into_batches = false;
  int64_t partition = -1;  // of the buffered rows (-1: none yet)
  int64_t next_batch = 0;  // into_batches: the partition number of the next batch
  std::deque<Morsel> buffer;
  int64_t front_offset = 0;  // rows of buffer.front() already sent on
  int64_t buffered_rows = 0;
  int64_t buffered_bytes = 0;  // of the buffered morsels (whole, even when partly sent on)
  // into_partitions over an input of known partitions: morsels are sliced at the cuts and
  // relabelled as they pass, nothing held (IntoPartitionsCuts); empty outputs become empty batches.
  std::optional<IntoPartitionsCuts> cuts;
  std::shared_ptr<arrow::Schema> schema;  // of the empty batches
  int64_t in_partition = -1;              // input partition of the last morsel
  size_t piece = 0;                       // its piece being filled
  int64_t filled = 0;                     // rows in that piece so far
  int64_t started = 0;                    // output partitions begun (each has had a batch)
};

/// A run of stateless operators ending in an order-sensitive step: a sink, or a re-chunk step
/// whose output flows into the next segment.
struct Segment {
  std::vector<std::unique_ptr<IntermediateOperator>> ops;
  std::unique_ptr<StreamingSink> sink;
  std::unique_ptr<Rechunk> rechunk;
  // Re-order buffer in front of the sink, by (seq, sub).
  std::mutex mutex;
  std::mutex hand_on_mutex;  // held while the morsels cut under `mutex` are scheduled downstream
  std::map<std::pair<int64_t, int64_t>, Morsel> pending;
  int64_t next_seq = 0;
  int64_t next_sub = 0;
  int64_t next_out_seq = 0;
  int64_t total_in = -1;  // morsels that will arrive, once the upstream finished
  bool finished = false;
  int64_t sink_partition = 0;  // partition of the morsels the sink is receiving

  bool closed() const { return sink || rechunk; }
  std::string end_name() const {
    if (sink) return sink->name();
    if (rechunk->into_batches) return "IntoBatches[" + std::to_string(rechunk->max_rows) + "]";
    if (rechunk->cuts) return "IntoPartitions[" + std::to_string(rechunk->cuts->num_outputs) + ", streaming]";
    return "Rechunk[" + std::to_string(rechunk->min_rows) + ", " + std::to_string(rechunk->max_rows) + "]";
  }
};

/// Runtime operators of one pipeline: the source and the segments in flow order.
struct Pipeline {
  std::unique_ptr<Source> source;
  std::vector<std::unique_ptr<Segment>> segments;
  int64_t morsel_rows = 0;    // rows per morsel the source cuts
  int64_t incoming_rows = 0;  // most rows a morsel has at the pipeline's end; 0 = `morsel_rows`
};

/// A pipeline that runs before the one that reads its output: either materialized into `output`
/// (join and concat inputs), or streamed by the consumer's SinkOutputSource from the pipeline's
/// last sink (sort, aggregate; `output` is null and the sink is not finalized by the run).
struct PipelineStage {
  std::unique_ptr<Pipeline> pipeline;
  std::shared_ptr<MaterializedBatches> output;
};

}  // namespace ketch::exec
