#pragma once

#include <arrow/api.h>

#include <memory>
#include <vector>

#include "ketch/common/memory_manager.h"
#include "ketch/exec/morsel.h"
#include "ketch/exec/operator.h"
#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// A Limit of at most this many rows (offset included) right above a Sort runs as a top-N (the
/// Ray runner's top-k uses the same bound, python/ketch/runners/ray/sort_stage.py).
constexpr int64_t kTopNMaxRows = 100'000;

/// The per-morsel half of a top-N (`sort(...).limit(n)`): sorts one morsel by the sort keys
/// (Arrow's stable sort_indices) and keeps its first `keep` rows, on the compute pool. Only
/// those rows are gathered (`take`), so wide columns (embeddings, images) of the other rows are
/// never copied.
class TopNRunOperator : public IntermediateOperator {
 public:
  TopNRunOperator(SortSpec spec, int64_t keep, arrow::internal::Executor* compute)
      : spec_(std::move(spec)), keep_(keep), executor_(compute) {}
  std::string name() const override { return "TopNRuns"; }
  arrow::internal::Executor* executor() const override { return executor_; }
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Execute(
      const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const override;

 private:
  SortSpec spec_;
  int64_t keep_;
  arrow::internal::Executor* executor_;
};

/// Blocking sink of a top-N: rows [offset, offset + limit) of the input in sort order, holding at
/// most about 2 × (offset + limit) rows plus one morsel at any time.
///
/// It receives morsels in input order (each already cut to its own best rows by TopNRunOperator),
/// and whenever the rows it holds pass max(offset + limit, morsel_rows) it sorts them with the
/// best rows kept so far in front (stable sort_indices) and keeps the first offset + limit. Rows
/// with equal keys therefore keep their input order: the result is exactly that of the stable
/// sort followed by the limit. Held bytes are charged to the query's MemoryManager.
class TopNSink : public BlockingSink {
 public:
  TopNSink(SortSpec spec, std::shared_ptr<arrow::Schema> schema, int64_t limit, int64_t offset,
           int64_t morsel_rows, MemoryManager* memory)
      : spec_(std::move(spec)),
        schema_(std::move(schema)),
        limit_(limit),
        offset_(offset),
        morsel_rows_(morsel_rows),
        memory_(memory) {}
  std::string name() const override { return "TopN"; }
  arrow::Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> Push(
      std::shared_ptr<arrow::RecordBatch> morsel) override;
  arrow::Status ProduceOutput(const Source::Emit& emit) override;

 private:
  int64_t keep() const { return offset_ + limit_; }
  /// Sorts the kept rows and the pending morsels together and keeps the first keep() rows.
  arrow::Status Compact();

  SortSpec spec_;
  std::shared_ptr<arrow::Schema> schema_;
  int64_t limit_;
  int64_t offset_;
  int64_t morsel_rows_;
  MemoryManager* memory_;
  std::shared_ptr<arrow::RecordBatch> kept_;  ///< the best rows so far, sorted
  std::vector<std::shared_ptr<arrow::RecordBatch>> pending_;
  int64_t pending_rows_ = 0;
  HeldBytes held_;  ///< the morsels kept, charged to memory_
};

}  // namespace ketch
