#include "ketch/exec/blocking/aggregate_state_merge.h"

#include <arrow/compute/api.h>
#include <arrow/compute/row/grouper.h>

#include <cmath>
#include <vector>

#include "ketch/exec/blocking/more_aggregates.h"
#include "ketch/plan/logical/aggregate_phases.h"
#include "ketch/plan/logical/more_aggregations.h"

namespace ketch {
namespace {

namespace cp = arrow::compute;

std::string Col(size_t i, const char* part) { return AggregateStateColumn(i, part); }

arrow::Result<std::shared_ptr<arrow::Array>> Column(const arrow::RecordBatch& batch, const std::string& name,
                                                    const std::shared_ptr<arrow::DataType>& type) {
  auto array = batch.GetColumnByName(name);
  if (!array) return arrow::Status::KeyError("aggregate state '", name, "' is missing");
  if (!array->type()->Equals(*type)) {
    ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(array, type));
    array = cast.make_array();
  }
  return array;
}

arrow::Result<std::shared_ptr<arrow::Array>> Whole(const arrow::Table& table, const std::string& name,
                                                   const std::shared_ptr<arrow::DataType>& type) {
  auto chunked = table.GetColumnByName(name);
  if (!chunked) return arrow::Status::KeyError("aggregate state '", name, "' is missing");
  std::shared_ptr<arrow::Array> array;
  if (chunked->num_chunks() == 1) {
    array = chunked->chunk(0);
  } else if (chunked->num_chunks() == 0) {
    ARROW_ASSIGN_OR_RAISE(array, arrow::MakeEmptyArray(chunked->type()));
  } else {
    ARROW_ASSIGN_OR_RAISE(array, arrow::Concatenate(chunked->chunks()));
  }
  if (!array->type()->Equals(*type)) {
    ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(array, type));
    array = cast.make_array();
  }
  return array;
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> Append(std::shared_ptr<arrow::RecordBatch> batch,
                                                          const std::string& name,
                                                          std::shared_ptr<arrow::Array> array) {
  return batch->AddColumn(batch->num_columns(), arrow::field(name, array->type()), std::move(array));
}

// The distinct non-null values of each list of `lists` (list<T>), as list<T> (first-seen order).
arrow::Result<std::shared_ptr<arrow::Array>> DistinctPerList(const std::shared_ptr<arrow::Array>& lists) {
  const auto& list = static_cast<const arrow::ListArray&>(*lists);
  ARROW_ASSIGN_OR_RAISE(auto parents, cp::CallFunction("list_parent_indices", {lists}));
  ARROW_ASSIGN_OR_RAISE(auto values, cp::CallFunction("list_flatten", {lists}));
  ARROW_ASSIGN_OR_RAISE(auto valid, cp::IsValid(values));
  ARROW_ASSIGN_OR_RAISE(auto kept_parents, cp::Filter(parents, valid));
  ARROW_ASSIGN_OR_RAISE(auto kept_values, cp::Filter(values, valid));
  std::vector<int32_t> offsets(list.length() + 1, 0);
  std::shared_ptr<arrow::Array> out_values;
  if (kept_values.length() > 0) {
    ARROW_ASSIGN_OR_RAISE(auto grouper, cp::Grouper::Make({kept_parents.type(), kept_values.type()}));
    cp::ExecBatch batch({kept_parents, kept_values}, kept_values.length());
    ARROW_RETURN_NOT_OK(grouper->Populate(cp::ExecSpan(batch)));
    ARROW_ASSIGN_OR_RAISE(auto uniques, grouper->GetUniques());
    auto unique_parents = uniques.values[0].make_array();
    auto unique_values = uniques.values[1].make_array();
    ARROW_ASSIGN_OR_RAISE(auto order, cp::SortIndices(*unique_parents));  // stable
    ARROW_ASSIGN_OR_RAISE(auto sorted_values, cp::Take(unique_values, order));
    ARROW_ASSIGN_OR_RAISE(auto as_int64, cp::Cast(unique_parents, arrow::int64()));
    const auto ids_array = as_int64.make_array();
    const auto& ids = static_cast<const arrow::Int64Array&>(*ids_array);
    for (int64_t k = 0; k < ids.length(); ++k) ++offsets[ids.Value(k) + 1];
    out_values = sorted_values.make_array();
  } else {
    ARROW_ASSIGN_OR_RAISE(out_values, arrow::MakeEmptyArray(list.value_type()));
  }
  for (int64_t g = 0; g < list.length(); ++g) offsets[g + 1] += offsets[g];
  arrow::Int32Builder offset_builder;
  ARROW_RETURN_NOT_OK(offset_builder.AppendValues(offsets));
  ARROW_ASSIGN_OR_RAISE(auto offset_array, offset_builder.Finish());
  return arrow::ListArray::FromArrays(*offset_array, *out_values);
}

}  // namespace

bool IsMomentAggregation(const std::string& f) { return f == "agg_var" || f == "agg_skew"; }

bool MergesByFold(const std::string& f) {
  return IsMomentAggregation(f) || f == "agg_count_distinct" || f == "agg_set" || f == "agg_percentile";
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> AddMomentStates(std::shared_ptr<arrow::RecordBatch> batch,
                                                                   const AggregationInfo& info, size_t i) {
  ARROW_ASSIGN_OR_RAISE(auto n_array, Column(*batch, Col(i, "n"), arrow::int64()));
  ARROW_ASSIGN_OR_RAISE(auto pvar_array, Column(*batch, Col(i, "pvar"), arrow::float64()));
  const auto& n = static_cast<const arrow::Int64Array&>(*n_array);
  const auto& pvar = static_cast<const arrow::DoubleArray&>(*pvar_array);
  const bool skew = info.function == "agg_skew";
  std::shared_ptr<arrow::Array> pskew_array;
  if (skew) {
    ARROW_ASSIGN_OR_RAISE(pskew_array, Column(*batch, Col(i, "pskew"), arrow::float64()));
  }
  arrow::DoubleBuilder m2, m3;
  ARROW_RETURN_NOT_OK(m2.Reserve(batch->num_rows()));
  ARROW_RETURN_NOT_OK(m3.Reserve(batch->num_rows()));
  for (int64_t r = 0; r < batch->num_rows(); ++r) {
    const double count = n.IsValid(r) ? static_cast<double>(n.Value(r)) : 0.0;
    const double variance = count > 0 && pvar.IsValid(r) ? pvar.Value(r) : 0.0;
    m2.UnsafeAppend(variance * count);
    double third = 0.0;
    if (skew && count > 0 && variance > 0) {
      const auto& g1 = static_cast<const arrow::DoubleArray&>(*pskew_array);
      // g1 = m3 / m2^1.5 over the morsel's population moments: M3 = g1 * var^1.5 * n. (With
      // variance 0 every value equals the mean and M3 is 0.)
      if (g1.IsValid(r)) third = g1.Value(r) * std::pow(variance, 1.5) * count;
    }
    m3.UnsafeAppend(third);
  }
  ARROW_ASSIGN_OR_RAISE(auto m2_array, m2.Finish());
  ARROW_ASSIGN_OR_RAISE(batch, Append(std::move(batch), Col(i, "m2"), m2_array));
  if (skew) {
    ARROW_ASSIGN_OR_RAISE(auto m3_array, m3.Finish());
    ARROW_ASSIGN_OR_RAISE(batch, Append(std::move(batch), Col(i, "m3"), m3_array));
  }
  return batch;
}

arrow::Status MomentStatesOfRows(const AggregationInfo& info, size_t i,
                                 const std::shared_ptr<arrow::Array>& values, arrow::FieldVector* fields,
                                 arrow::ArrayVector* columns) {
  const auto add = [&](const std::string& name, std::shared_ptr<arrow::Array> array) {
    fields->push_back(arrow::field(name, array->type()));
    columns->push_back(std::move(array));
  };
  ARROW_ASSIGN_OR_RAISE(auto valid, cp::IsValid(values));
  ARROW_ASSIGN_OR_RAISE(auto n, cp::Cast(valid, arrow::int64()));
  add(Col(i, "n"), n.make_array());
  add(Col(i, "mean"), values);
  ARROW_ASSIGN_OR_RAISE(auto zeros, arrow::MakeArrayFromScalar(arrow::DoubleScalar(0.0), values->length()));
  add(Col(i, "m2"), zeros);
  if (info.function == "agg_skew") add(Col(i, "m3"), zeros);
  return arrow::Status::OK();
}

arrow::Result<std::shared_ptr<arrow::Array>> SingletonLists(const std::shared_ptr<arrow::Array>& values) {
  arrow::Int32Builder offsets;
  ARROW_RETURN_NOT_OK(offsets.Reserve(values->length() + 1));
  for (int64_t r = 0; r <= values->length(); ++r) offsets.UnsafeAppend(static_cast<int32_t>(r));
  ARROW_ASSIGN_OR_RAISE(auto offset_array, offsets.Finish());
  return arrow::ListArray::FromArrays(*offset_array, *values);
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> FoldStates(
    std::shared_ptr<arrow::RecordBatch> merged, const arrow::Table& table,
    const std::shared_ptr<arrow::Array>& positions_array, const AggregationInfo& info, size_t i) {
  std::shared_ptr<arrow::Array> positions_list = positions_array;
  if (positions_list->type_id() != arrow::Type::LIST) {
    ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(positions_list, arrow::list(arrow::int64())));
    positions_list = cast.make_array();
  }
  const auto& groups = static_cast<const arrow::ListArray&>(*positions_list);
  ARROW_ASSIGN_OR_RAISE(auto flat_positions, cp::Cast(groups.values(), arrow::int64()));
  const auto position_values = flat_positions.make_array();
  const auto& position = static_cast<const arrow::Int64Array&>(*position_values);
  const int64_t num_groups = groups.length();
  if (!IsMomentAggregation(info.function)) {
    // Value lists: each group's lists concatenated (gathered in group order); distinct lists are
    // then deduplicated.
    const bool values = info.function == "agg_percentile";
    const char* part = values ? "vlist" : "dlist";
    ARROW_ASSIGN_OR_RAISE(
        auto lists, Whole(table, Col(i, part), arrow::list(values ? arrow::float64() : info.input_type)));
    ARROW_ASSIGN_OR_RAISE(auto gathered_datum, cp::Take(lists, position_values));
    const auto gathered_array = gathered_datum.make_array();
    const auto& gathered = static_cast<const arrow::ListArray&>(*gathered_array);
    arrow::Int32Builder offsets;
    ARROW_RETURN_NOT_OK(offsets.Reserve(num_groups + 1));
    for (int64_t g = 0; g <= num_groups; ++g) {
      const int64_t row = g < num_groups ? groups.value_offset(g) : groups.value_offset(num_groups);
      offsets.UnsafeAppend(row < gathered.length() ? gathered.value_offset(row)
                                                   : gathered.value_offset(gathered.length()));
    }
    ARROW_ASSIGN_OR_RAISE(auto offset_array, offsets.Finish());
    ARROW_ASSIGN_OR_RAISE(auto concatenated, arrow::ListArray::FromArrays(*offset_array, *gathered.values()));
    if (values) return Append(std::move(merged), Col(i, part), concatenated);
    ARROW_ASSIGN_OR_RAISE(auto distinct, DistinctPerList(concatenated));
    return Append(std::move(merged), Col(i, "dlist"), distinct);
  }
  const bool skew = info.function == "agg_skew";
  ARROW_ASSIGN_OR_RAISE(auto n_array, Whole(table, Col(i, "n"), arrow::int64()));
  ARROW_ASSIGN_OR_RAISE(auto mean_array, Whole(table, Col(i, "mean"), arrow::float64()));
  ARROW_ASSIGN_OR_RAISE(auto m2_array, Whole(table, Col(i, "m2"), arrow::float64()));
  std::shared_ptr<arrow::Array> m3_array = m2_array;
  if (skew) {
    ARROW_ASSIGN_OR_RAISE(m3_array, Whole(table, Col(i, "m3"), arrow::float64()));
  }
  const auto& n = static_cast<const arrow::Int64Array&>(*n_array);
  const auto& mean = static_cast<const arrow::DoubleArray&>(*mean_array);
  const auto& m2 = static_cast<const arrow::DoubleArray&>(*m2_array);
  const auto& m3 = static_cast<const arrow::DoubleArray&>(*m3_array);
  arrow::Int64Builder out_n;
  arrow::DoubleBuilder out_mean, out_m2, out_m3;
  for (int64_t g = 0; g < num_groups; ++g) {
    double count = 0, mu = 0, a2 = 0, a3 = 0;
    for (int64_t k = groups.value_offset(g); k < groups.value_offset(g + 1); ++k) {
      const int64_t r = position.Value(k);
      const double nb = n.IsValid(r) ? static_cast<double>(n.Value(r)) : 0.0;
      if (nb == 0) continue;
      const double mb = mean.Value(r), b2 = m2.IsValid(r) ? m2.Value(r) : 0.0;
      const double b3 = skew && m3.IsValid(r) ? m3.Value(r) : 0.0;
      if (count == 0) {
        count = nb, mu = mb, a2 = b2, a3 = b3;
        continue;
      }
      const double na = count, total = na + nb, d = mb - mu;
      a3 =
          a3 + b3 + d * d * d * na * nb * (na - nb) / (total * total) + 3.0 * d * (na * b2 - nb * a2) / total;
      a2 = a2 + b2 + d * d * na * nb / total;
      mu = mu + d * nb / total;
      count = total;
    }
    ARROW_RETURN_NOT_OK(out_n.Append(static_cast<int64_t>(count)));
    ARROW_RETURN_NOT_OK(out_mean.Append(mu));
    ARROW_RETURN_NOT_OK(out_m2.Append(a2));
    ARROW_RETURN_NOT_OK(out_m3.Append(a3));
  }
  ARROW_ASSIGN_OR_RAISE(auto n_out, out_n.Finish());
  ARROW_ASSIGN_OR_RAISE(auto mean_out, out_mean.Finish());
  ARROW_ASSIGN_OR_RAISE(auto m2_out, out_m2.Finish());
  ARROW_ASSIGN_OR_RAISE(merged, Append(std::move(merged), Col(i, "n"), n_out));
  ARROW_ASSIGN_OR_RAISE(merged, Append(std::move(merged), Col(i, "mean"), mean_out));
  ARROW_ASSIGN_OR_RAISE(merged, Append(std::move(merged), Col(i, "m2"), m2_out));
  if (skew) {
    ARROW_ASSIGN_OR_RAISE(auto m3_out, out_m3.Finish());
    ARROW_ASSIGN_OR_RAISE(merged, Append(std::move(merged), Col(i, "m3"), m3_out));
  }
  return merged;
}

arrow::Result<arrow::Datum> FinishFolded(const arrow::RecordBatch& merged, const AggregationInfo& info,
                                         size_t i) {
  const auto& f = info.function;
  if (f == "agg_percentile") {
    ARROW_ASSIGN_OR_RAISE(auto lists, Column(merged, Col(i, "vlist"), arrow::list(arrow::float64())));
    ARROW_ASSIGN_OR_RAISE(double q, AggregationPercentage(info.options));
    ARROW_ASSIGN_OR_RAISE(auto quantiles, QuantilePerList(lists, q));
    return arrow::Datum(quantiles);
  }
  if (f == "agg_count_distinct" || f == "agg_set") {
    ARROW_ASSIGN_OR_RAISE(auto lists, Column(merged, Col(i, "dlist"), arrow::list(info.input_type)));
    if (f == "agg_set") return arrow::Datum(lists);
    ARROW_ASSIGN_OR_RAISE(auto lengths, cp::CallFunction("list_value_length", {lists}));
    return lengths;
  }
  ARROW_ASSIGN_OR_RAISE(auto n_array, Column(merged, Col(i, "n"), arrow::int64()));
  ARROW_ASSIGN_OR_RAISE(auto m2_array, Column(merged, Col(i, "m2"), arrow::float64()));
  const auto& n = static_cast<const arrow::Int64Array&>(*n_array);
  const auto& m2 = static_cast<const arrow::DoubleArray&>(*m2_array);
  arrow::DoubleBuilder out;
  ARROW_RETURN_NOT_OK(out.Reserve(merged.num_rows()));
  if (f == "agg_var") {
    ARROW_ASSIGN_OR_RAISE(int ddof, AggregationDdof(info.options, 1));
    for (int64_t g = 0; g < merged.num_rows(); ++g) {
      const int64_t count = n.IsValid(g) ? n.Value(g) : 0;
      if (count <= ddof) {
        out.UnsafeAppendNull();
      } else {
        out.UnsafeAppend(m2.Value(g) / static_cast<double>(count - ddof));
      }
    }
  } else {
    ARROW_ASSIGN_OR_RAISE(auto m3_array, Column(merged, Col(i, "m3"), arrow::float64()));
    const auto& m3 = static_cast<const arrow::DoubleArray&>(*m3_array);
    for (int64_t g = 0; g < merged.num_rows(); ++g) {
      const int64_t count = n.IsValid(g) ? n.Value(g) : 0;
      if (count == 0) {
        out.UnsafeAppendNull();
      } else {
        // g1 = (M3 / n) / (M2 / n)^1.5 = sqrt(n) * M3 / M2^1.5 (NaN when M2 is 0, as Arrow's).
        out.UnsafeAppend(std::sqrt(static_cast<double>(count)) * m3.Value(g) / std::pow(m2.Value(g), 1.5));
      }
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto result, out.Finish());
  return arrow::Datum(result);
}

}  // namespace ketch
