#include "ketch/plan/logical/aggregate_phases.h"

namespace ketch {

std::string AggregateStateColumn(size_t i, const char* part) {
  return "__a" + std::to_string(i) + "_" + part;
}

bool AggregationCollectsValues(const std::string& function) {
  // hash_list cannot merge lists; stddev merged from partial moments loses precision
  // (catastrophic cancellation for values far from 0), hash_stddev over raw values is stable.
  // Arrow's t-digest state is not exposed to merge. (var, skew, count_distinct, set and the exact
  // percentile merge moments / value lists: aggregate_state_merge.h.)
  return function == "agg_list" || function == "agg_concat" || function == "agg_approx_count_distinct" ||
         function == "agg_stddev" || function == "agg_approx_percentiles";
}

bool AggregationByRowPosition(const AggregationInfo& info) {
  if (info.function != "agg_any_value" && info.function != "agg_list") return false;
  switch (info.input_type->id()) {
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::FIXED_SIZE_LIST:
    case arrow::Type::LIST_VIEW:
    case arrow::Type::LARGE_LIST_VIEW:
    case arrow::Type::STRUCT:
    case arrow::Type::MAP:
    case arrow::Type::SPARSE_UNION:
    case arrow::Type::DENSE_UNION:
    case arrow::Type::EXTENSION:
      return true;
    default:
      return false;
  }
}

bool AggregateIsSinglePhase(const AggregateSpec& spec, const arrow::Schema& input) {
  for (const auto& agg : spec.aggregations) {
    auto info = ResolveAggregation(agg, input);
    if (info.ok() && (AggregationCollectsValues(info->function) || AggregationByRowPosition(*info))) {
      return true;
    }
  }
  return false;
}

arrow::Result<std::shared_ptr<arrow::Schema>> PartialAggregateSchema(const AggregateSpec& spec,
                                                                     const arrow::Schema& input) {
  if (AggregateIsSinglePhase(spec, input)) {
    return arrow::Status::Invalid("aggregate has no partial phase (it collects values): ",
                                  spec.aggregations.empty() ? "" : spec.aggregations[0]->ToString());
  }
  arrow::FieldVector fields;
  if (spec.group_by.empty()) fields.push_back(arrow::field(kAggregateAllRowsKey, arrow::int8()));
  for (const auto& key : spec.group_by) {
    auto field = input.GetFieldByName(key);
    if (!field) return arrow::Status::KeyError("group-by key '", key, "' is not a column of the input");
    fields.push_back(arrow::field(key, field->type()));
  }
  for (size_t i = 0; i < spec.aggregations.size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(auto info, ResolveAggregation(spec.aggregations[i], input));
    const auto& f = info.function;
    const auto state = [&](const char* part, std::shared_ptr<arrow::DataType> type) {
      fields.push_back(arrow::field(AggregateStateColumn(i, part), std::move(type)));
    };
    const auto id = info.input_type->id();
    if (f == "agg_sum") {
      // A float32 sum's partial sums stay float64: rounded to float32 once, at the end.
      state("sum", id == arrow::Type::FLOAT ? arrow::float64() : info.output_type);
      if (id == arrow::Type::INT64 || id == arrow::Type::UINT64) state("fsum", arrow::float64());
    } else if (f == "agg_count") {
      state("count", arrow::int64());
    } else if (f == "agg_mean") {
      state("sum", arrow::float64());
      state("count", arrow::int64());
    } else if (f == "agg_min") {
      state("min", info.input_type);
    } else if (f == "agg_max") {
      state("max", info.input_type);
    } else if (f == "agg_any_value") {
      state("one", info.input_type);
    } else if (f == "agg_product") {
      state("prod", info.output_type);
    } else if (f == "agg_bool_and" || f == "agg_bool_or") {
      state("bool", arrow::boolean());
    } else if (f == "agg_var" || f == "agg_skew") {
      state("n", arrow::int64());
      state("mean", arrow::float64());
      state("m2", arrow::float64());
      if (f == "agg_skew") state("m3", arrow::float64());
    } else if (f == "agg_count_distinct" || f == "agg_set") {
      state("dlist", arrow::list(info.input_type));
    } else if (f == "agg_percentile") {
      state("vlist", arrow::list(arrow::float64()));
    } else {
      return arrow::Status::Invalid("aggregation ", f, " has no partial state");
    }
  }
  return arrow::schema(fields);
}

arrow::Result<std::optional<AggregateSplit>> SplitAggregate(const LogicalPlanPtr& aggregate) {
  if (aggregate->kind() != LogicalKind::kAggregate || aggregate->aggregate().phase != AggregatePhase::kFull) {
    return std::nullopt;
  }
  const auto& input = aggregate->inputs()[0];
  if (AggregateIsSinglePhase(aggregate->aggregate(), *input->schema())) return std::nullopt;
  AggregateSpec partial_spec = aggregate->aggregate();
  partial_spec.phase = AggregatePhase::kPartial;
  ARROW_ASSIGN_OR_RAISE(auto partial, LogicalPlan::Aggregate(input, std::move(partial_spec)));
  ARROW_ASSIGN_OR_RAISE(auto placeholder, LogicalPlan::InMemory(partial->schema(), {}));
  AggregateSpec final_spec = aggregate->aggregate();
  final_spec.phase = AggregatePhase::kFinal;
  final_spec.source_schema = input->schema();
  ARROW_ASSIGN_OR_RAISE(auto final, LogicalPlan::Aggregate(placeholder, std::move(final_spec)));
  return AggregateSplit{std::move(partial), std::move(final)};
}

}  // namespace ketch
