#pragma once

#include "ketch/exec/operator.h"

namespace ketch {

/// One output row per list element of the exploded columns (several columns must hold lists of
/// equal lengths row by row); other columns repeat. Null and empty lists give one row with null,
/// as in Daft. Uses Arrow's list_flatten / list_parent_indices / take.
class ExplodeOperator : public IntermediateOperator {
 public:
  ExplodeOperator(std::vector<std::string> columns, std::shared_ptr<arrow::Schema> output_schema,
                  arrow::internal::Executor* compute)
      : columns_(std::move(columns)), output_schema_(std::move(output_schema)), executor_(compute) {}
  std::string name() const override { return "Explode"; }
  arrow::internal::Executor* executor() const override { return executor_; }
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Execute(
      const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const override;

 private:
  std::vector<std::string> columns_;
  std::shared_ptr<arrow::Schema> output_schema_;
  arrow::internal::Executor* executor_;
};

/// Keeps each row with probability `fraction` (Bernoulli sampling; deterministic for a seed and a
/// morsel, whose sequence number salts the generator), or, with replacement, draws a Poisson
/// number of copies of each row.
class SampleOperator : public IntermediateOperator {
 public:
  SampleOperator(double fraction, bool with_replacement, uint64_t seed, arrow::internal::Executor* compute)
      : fraction_(fraction), with_replacement_(with_replacement), seed_(seed), executor_(compute) {}
  std::string name() const override { return "Sample"; }
  arrow::internal::Executor* executor() const override { return executor_; }
  arrow::Result<std::shared_ptr<arrow::RecordBatch>> Execute(
      const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const override;

 private:
  double fraction_;
  bool with_replacement_;
  uint64_t seed_;
  arrow::internal::Executor* executor_;
};

}  // namespace ketch
