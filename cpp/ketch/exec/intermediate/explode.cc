#include "ketch/exec/intermediate/explode.h"

#include <arrow/compute/api.h>

#include <random>

namespace ketch {

namespace cp = arrow::compute;

arrow::Result<std::shared_ptr<arrow::RecordBatch>> ExplodeOperator::Execute(
    const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const {
  const int64_t n = morsel->num_rows();
  // Lengths of the first exploded column decide the output rows; null/empty lists count as 1.
  ARROW_ASSIGN_OR_RAISE(auto first, GetColumn(*morsel, columns_[0]));
  ARROW_ASSIGN_OR_RAISE(auto lengths_datum, cp::CallFunction("list_value_length", {first}));
  auto lengths = lengths_datum.make_array();
  ARROW_ASSIGN_OR_RAISE(auto lengths64, cp::Cast(lengths, arrow::int64()));
  auto len_array = lengths64.make_array();
  const auto& len = static_cast<const arrow::Int64Array&>(*len_array);
  arrow::Int64Builder parent_builder;
  for (int64_t i = 0; i < n; ++i) {
    int64_t k = len.IsNull(i) || len.Value(i) == 0 ? 1 : len.Value(i);
    for (int64_t j = 0; j < k; ++j) ARROW_RETURN_NOT_OK(parent_builder.Append(i));
  }
  ARROW_ASSIGN_OR_RAISE(auto parents, parent_builder.Finish());
  arrow::ArrayVector columns;
  for (const auto& field : output_schema_->fields()) {
    ARROW_ASSIGN_OR_RAISE(auto column, GetColumn(*morsel, field->name()));
    if (std::find(columns_.begin(), columns_.end(), field->name()) == columns_.end()) {
      ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(column, parents));
      columns.push_back(taken.make_array());
      continue;
    }
    // Element indices into the flattened values, null where the list was null or empty.
    ARROW_ASSIGN_OR_RAISE(auto this_len_datum, cp::CallFunction("list_value_length", {column}));
    ARROW_ASSIGN_OR_RAISE(auto this_len64, cp::Cast(this_len_datum, arrow::int64()));
    auto this_len_array = this_len64.make_array();
    const auto& this_len = static_cast<const arrow::Int64Array&>(*this_len_array);
    arrow::Int64Builder index;
    int64_t offset = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t expected = len.IsNull(i) ? 0 : len.Value(i);
      const int64_t got = this_len.IsNull(i) ? 0 : this_len.Value(i);
      if (got != expected) {
        return arrow::Status::Invalid("explode(): columns '", columns_[0], "' and '", field->name(),
                                      "' have lists of different lengths at row ", ctx->SourceRow(i));
      }
      if (got == 0) {
        ARROW_RETURN_NOT_OK(index.AppendNull());
      } else {
        for (int64_t j = 0; j < got; ++j) ARROW_RETURN_NOT_OK(index.Append(offset + j));
      }
      offset += got;
    }
    ARROW_ASSIGN_OR_RAISE(auto element_index, index.Finish());
    ARROW_ASSIGN_OR_RAISE(auto flat, cp::CallFunction("list_flatten", {column}));
    ARROW_ASSIGN_OR_RAISE(auto values, cp::Take(flat, element_index));
    columns.push_back(values.make_array());
  }
  ctx->source_rows = nullptr;  // rows no longer map 1:1 to the source
  return arrow::RecordBatch::Make(output_schema_, parents->length(), columns);
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> SampleOperator::Execute(
    const std::shared_ptr<arrow::RecordBatch>& morsel, EvalContext* ctx) const {
  std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(ctx->row_offset));
  arrow::Int64Builder indices;
  for (int64_t i = 0; i < morsel->num_rows(); ++i) {
    if (with_replacement_) {
      std::poisson_distribution<int> copies(fraction_);
      for (int c = copies(rng); c > 0; --c) ARROW_RETURN_NOT_OK(indices.Append(i));
    } else if (std::uniform_real_distribution<double>(0.0, 1.0)(rng) < fraction_) {
      ARROW_RETURN_NOT_OK(indices.Append(i));
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto index_array, indices.Finish());
  ARROW_ASSIGN_OR_RAISE(auto taken, cp::Take(morsel, index_array));
  ctx->source_rows = nullptr;
  return taken.record_batch();
}

}  // namespace ketch
