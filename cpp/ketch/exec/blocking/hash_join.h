#pragma once

#include "ketch/exec/operator.h"
#include "ketch/exec/sources/materialized_source.h"
#include "ketch/plan/logical/logical_plan.h"

namespace ketch {

/// Equi-join of two finished pipelines (inner, left, right, outer, semi, anti).
///
/// The hash table is built on the smaller input and the larger one probes it (Arrow Acero's hash
/// join node, used as a kernel over the key columns and a row index only); the payload columns of
/// each side are then gathered with `take`, so any column type (images included) passes through.
/// Key columns of different integer widths, or of string and large_string, are compared after a
/// cast to the wider type. Output row order is not defined, as in Daft.
class HashJoinSource : public Source {
 public:
  HashJoinSource(std::shared_ptr<MaterializedBatches> left, std::shared_ptr<MaterializedBatches> right,
                 JoinSpec spec, std::shared_ptr<arrow::Schema> left_schema,
                 std::shared_ptr<arrow::Schema> right_schema, std::shared_ptr<arrow::Schema> output_schema)
      : left_(std::move(left)),
        right_(std::move(right)),
        spec_(std::move(spec)),
        left_schema_(std::move(left_schema)),
        right_schema_(std::move(right_schema)),
        output_schema_(std::move(output_schema)) {}
  std::string name() const override { return "HashJoin"; }
  arrow::Status Produce(const Emit& emit) override;

 private:
  std::shared_ptr<MaterializedBatches> left_, right_;
  JoinSpec spec_;
  std::shared_ptr<arrow::Schema> left_schema_, right_schema_, output_schema_;
};

}  // namespace ketch
