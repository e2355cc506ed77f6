#include "ketch/exec/blocking/more_aggregates.h"

#include <arrow/compute/api.h>

#include "ketch/exec/blocking/aggregate_state_merge.h"
#include "ketch/plan/logical/aggregate_phases.h"
#include "ketch/plan/logical/more_aggregations.h"

namespace ketch {
namespace {

namespace cp = arrow::compute;

std::string Col(size_t i, const char* part) { return AggregateStateColumn(i, part); }

}  // namespace

arrow::Result<std::shared_ptr<arrow::Array>> QuantilePerList(const std::shared_ptr<arrow::Array>& lists,
                                                             double q) {
  const auto& list = static_cast<const arrow::ListArray&>(*lists);
  cp::QuantileOptions options(q, cp::QuantileOptions::LINEAR);
  arrow::DoubleBuilder out;
  ARROW_RETURN_NOT_OK(out.Reserve(list.length()));
  for (int64_t g = 0; g < list.length(); ++g) {
    if (list.IsNull(g) || list.value_length(g) == 0) {
      out.UnsafeAppendNull();
      continue;
    }
    ARROW_ASSIGN_OR_RAISE(auto quantile, cp::CallFunction("quantile", {list.value_slice(g)}, &options));
    const auto values = quantile.make_array();
    if (values->length() == 0 || values->IsNull(0)) {
      out.UnsafeAppendNull();
    } else {
      out.UnsafeAppend(static_cast<const arrow::DoubleArray&>(*values).Value(0));
    }
  }
  return out.Finish();
}

namespace {

// hash_tdigest gives a group without values a list of nulls: Daft gives a null list.
arrow::Result<arrow::Datum> NullWhereEmpty(const arrow::Datum& digests, bool scalar) {
  const auto array = digests.make_array();
  ARROW_ASSIGN_OR_RAISE(auto first, cp::CallFunction("list_element", {array, arrow::Datum(int32_t{0})}));
  if (scalar) return first;
  const auto first_array = first.make_array();
  const auto& fixed = static_cast<const arrow::FixedSizeListArray&>(*array);
  ARROW_ASSIGN_OR_RAISE(auto flat, fixed.Flatten());
  const int64_t nulls = first_array->null_count();
  std::shared_ptr<arrow::Buffer> bitmap = nulls > 0 ? first_array->null_bitmap() : nullptr;
  if (bitmap && first_array->offset() != 0) {
    ARROW_ASSIGN_OR_RAISE(bitmap, arrow::internal::CopyBitmap(arrow::default_memory_pool(), bitmap->data(),
                                                              first_array->offset(), first_array->length()));
  }
  ARROW_ASSIGN_OR_RAISE(auto rebuilt, arrow::FixedSizeListArray::FromArrays(flat, fixed.value_length(),
                                                                            std::move(bitmap), nulls));
  return arrow::Datum(rebuilt);
}

}  // namespace

bool MoreAggregationInputAsDouble(const AggregationInfo& info) {
  const auto& f = info.function;
  return f == "agg_var" || f == "agg_skew" || f == "agg_approx_percentiles" || f == "agg_percentile";
}

arrow::Result<std::vector<cp::Aggregate>> MorePartialAggregates(const AggregationInfo& info, size_t i) {
  std::vector<cp::Aggregate> aggs;
  const auto& f = info.function;
  if (f == "agg_product") {
    aggs.emplace_back("hash_product", Col(i, "v"), Col(i, "prod"));
  } else if (f == "agg_bool_and" || f == "agg_bool_or") {
    aggs.emplace_back(f == "agg_bool_and" ? "hash_all" : "hash_any", Col(i, "v"), Col(i, "bool"));
  } else if (f == "agg_var" || f == "agg_skew") {
    // The morsel's moments by Arrow's stable kernels; aggregate_state_merge.h turns them into
    // (n, mean, M2, M3) states.
    aggs.emplace_back("hash_count", std::make_shared<cp::CountOptions>(cp::CountOptions::ONLY_VALID),
                      Col(i, "v"), Col(i, "n"));
    aggs.emplace_back("hash_mean", Col(i, "v"), Col(i, "mean"));
    aggs.emplace_back("hash_variance", std::make_shared<cp::VarianceOptions>(0), Col(i, "v"), Col(i, "pvar"));
    if (f == "agg_skew") {
      aggs.emplace_back("hash_skew", std::make_shared<cp::SkewOptions>(true, true), Col(i, "v"),
                        Col(i, "pskew"));
    }
  } else if (f == "agg_count_distinct" || f == "agg_set") {
    aggs.emplace_back("hash_distinct", std::make_shared<cp::CountOptions>(cp::CountOptions::ONLY_VALID),
                      Col(i, "v"), Col(i, "dlist"));
  } else if (f == "agg_percentile") {
    aggs.emplace_back("hash_list", Col(i, "v"), Col(i, "vlist"));
  }
  return aggs;
}

arrow::Result<std::vector<cp::Aggregate>> MoreMergeAggregates(const AggregationInfo& info, size_t i,
                                                              bool single_phase) {
  std::vector<cp::Aggregate> aggs;
  const auto& f = info.function;
  const std::string v = Col(i, "v");
  if (!single_phase && MergesByFold(f)) return aggs;  // folded over row positions (see there)
  if (f == "agg_product" || f == "agg_bool_and" || f == "agg_bool_or") {
    const char* function = f == "agg_product"    ? "hash_product"
                           : f == "agg_bool_and" ? "hash_all"
                                                 : "hash_any";
    const std::string state = Col(i, f == "agg_product" ? "prod" : "bool");
    aggs.emplace_back(function, single_phase ? v : state, state);
  } else if (f == "agg_count_distinct") {
    aggs.emplace_back("hash_count_distinct", std::make_shared<cp::CountOptions>(cp::CountOptions::ONLY_VALID),
                      v, Col(i, "cd"));
  } else if (f == "agg_set") {
    aggs.emplace_back("hash_distinct", std::make_shared<cp::CountOptions>(cp::CountOptions::ONLY_VALID), v,
                      Col(i, "set"));
  } else if (f == "agg_var") {
    ARROW_ASSIGN_OR_RAISE(int ddof, AggregationDdof(info.options, 1));
    aggs.emplace_back("hash_variance", std::make_shared<cp::VarianceOptions>(ddof), v, Col(i, "var"));
  } else if (f == "agg_skew") {
    aggs.emplace_back("hash_skew", std::make_shared<cp::SkewOptions>(/*skip_nulls=*/true, /*biased=*/true), v,
                      Col(i, "skew"));
  } else if (f == "agg_approx_percentiles") {
    ARROW_ASSIGN_OR_RAISE(auto percentiles, AggregationPercentiles(info.options));
    aggs.emplace_back("hash_tdigest", std::make_shared<cp::TDigestOptions>(percentiles), v,
                      Col(i, "tdigest"));
  } else if (f == "agg_percentile") {
    aggs.emplace_back("hash_list", v, Col(i, "plist"));
  }
  return aggs;
}

arrow::Result<arrow::Datum> FinishMoreAggregation(
    const AggregationInfo& info, size_t i,
    const std::function<arrow::Result<arrow::Datum>(const std::string&)>& column) {
  const auto& f = info.function;
  if (f == "agg_product") return column(Col(i, "prod"));
  if (f == "agg_bool_and" || f == "agg_bool_or") return column(Col(i, "bool"));
  if (f == "agg_count_distinct") return column(Col(i, "cd"));
  if (f == "agg_set") return column(Col(i, "set"));
  if (f == "agg_var") return column(Col(i, "var"));
  if (f == "agg_skew") return column(Col(i, "skew"));
  if (f == "agg_approx_percentiles") {
    ARROW_ASSIGN_OR_RAISE(auto digests, column(Col(i, "tdigest")));
    return NullWhereEmpty(digests, info.output_type->id() == arrow::Type::DOUBLE);
  }
  if (f == "agg_percentile") {
    ARROW_ASSIGN_OR_RAISE(auto lists, column(Col(i, "plist")));
    ARROW_ASSIGN_OR_RAISE(double q, AggregationPercentage(info.options));
    auto array = lists.make_array();
    if (array->type_id() == arrow::Type::LARGE_LIST) {
      ARROW_ASSIGN_OR_RAISE(auto cast, cp::Cast(array, arrow::list(arrow::float64())));
      array = cast.make_array();
    }
    ARROW_ASSIGN_OR_RAISE(auto quantiles, QuantilePerList(array, q));
    return arrow::Datum(quantiles);
  }
  return arrow::Status::Invalid("unknown aggregation '", f, "'");
}

}  // namespace ketch
