#pragma once

#include "ketch/exec/operator.h"
#include "ketch/exec/streaming_operator.h"
#include "ketch/expr/expr_analysis.h"

namespace ketch {

/// Evaluates a list of expressions over each morsel. Runs on the compute pool, or, for projects that
/// call Python UDFs, on `concurrency` threads of its own (one UDF instance per thread at most), so
/// the GIL never blocks the compute pool.
class ProjectOperator : public IntermediateOperator, public StreamingOperator {
 public:
  /// `own_threads` > 0 creates a dedicated pool of that many threads (UDF projects).
  static arrow::Result<std::unique_ptr<ProjectOperator>> Make(std::vector<ExprPtr> exprs,
                                                              std::shared_ptr<arrow::Schema> output_schema,
                                                              arrow::internal::Executor* compute_pool,
                                                              int32_t own_threads);
  std::string name() const override { return own_pool_ ? "UDFProject" : "Project"; }
  arrow::internal::Executor* executor() const override { return executor_; }
  int32_t own_workers() const override { return own_threads_; }
  bool grows_bytes() const override { return grows_bytes_; }
  void set_grows_bytes(bool grows) { grows_bytes_ = grows; }
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Execute(
      const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const override;
  /// A projection with one generator UDF streams: its items are pulled lazily, piece by piece.
  bool streams() const override { return generator_ >= 0; }
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> ExecuteStream(
      const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx, int64_t max_rows,
      int64_t max_bytes, const EmitPiece& emit) const override;

 private:
  int32_t own_threads_ = 0;
  int generator_ = -1;  // index of the generator UDF expression (only when there is exactly one)
  static const Expr* Unaliased(const Expr& expr);
  bool grows_bytes_ = false;
  std::vector<ExprPtr> exprs_;
  std::shared_ptr<arrow::Schema> output_schema_;
  std::shared_ptr<arrow::internal::ThreadPool> own_pool_;
  arrow::internal::Executor* executor_ = nullptr;
};

/// Keeps the rows of each morsel where the predicate is true (null counts as false); its conjuncts
/// are applied in order, each to the rows the earlier ones kept (FilterRows).
class FilterOperator : public IntermediateOperator {
 public:
  FilterOperator(ExprPtr predicate, arrow::internal::Executor* compute_pool)
      : predicate_(std::move(predicate)), executor_(compute_pool) {
    SplitConjuncts(predicate_, &conjuncts_);
  }
  std::string name() const override { return "Filter"; }
  arrow::internal::Executor* executor() const override { return executor_; }
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Execute(
      const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const override;

 private:
  ExprPtr predicate_;
  std::vector<ExprPtr> conjuncts_;  // evaluated in order, each on the rows the earlier ones kept
  arrow::internal::Executor* executor_;
};

}  // namespace ketch
