#include "ketch/plan/logical/logical_plan.h"
#include "ketch/plan/logical/more_aggregations.h"
#include "ketch/plan/logical/plan_text.h"

// An aggregation expression (sum, mean, count, ...) resolved against its input schema: the
// function, its input column and its output type, or the error a user sees.

namespace ketch {
namespace {

bool IsNumeric(const arrow::DataType& type) {
  return arrow::is_integer(type.id()) || arrow::is_floating(type.id());
}

bool IsOrderable(const arrow::DataType& type) {
  return IsNumeric(type) || arrow::is_string(type.id()) || arrow::is_binary(type.id()) ||
         arrow::is_temporal(type.id()) || type.id() == arrow::Type::BOOL;
}

}  // namespace

arrow::Result<AggregationInfo> ResolveAggregation(const ExprPtr& expr, const arrow::Schema& schema) {
  AggregationInfo info;
  const Expr* call = expr.get();
  if (call->kind() == ExprKind::kAlias) call = call->children()[0].get();
  if (call->kind() != ExprKind::kCall || call->name().rfind("agg_", 0) != 0) {
    return arrow::Status::Invalid("agg() takes aggregation expressions such as col(\"x\").sum(), got ",
                                  expr->ToString());
  }
  if (call->children().size() != 1 || call->children()[0]->kind() != ExprKind::kColumn) {
    return arrow::Status::NotImplemented(call->name(),
                                         " needs a column as its input (add the computed column ",
                                         "with with_column first), got ", call->ToString());
  }
  info.function = call->name();
  info.input = call->children()[0]->name();
  info.output = expr->OutputName();
  info.options = call->options();
  ARROW_ASSIGN_OR_RAISE(auto field, ResolveField(*call->children()[0], schema));
  info.input_type = field->type();
  const auto& type = *info.input_type;
  auto unsupported = [&]() {
    return arrow::Status::TypeError(info.function, " is not supported for column '", info.input, "' of type ",
                                    PrettyType(type), " (in ", expr->ToString(), ")");
  };
  const std::string& f = info.function;
  if (f == "agg_sum") {
    if (!IsNumeric(type)) return unsupported();
    // Daft's sum types: float32 stays float32 (summed in float64, rounded once at the end).
    info.output_type = type.id() == arrow::Type::FLOAT         ? arrow::float32()
                       : arrow::is_floating(type.id())         ? arrow::float64()
                       : arrow::is_unsigned_integer(type.id()) ? arrow::uint64()
                                                               : arrow::int64();
  } else if (f == "agg_mean" || f == "agg_stddev") {
    if (!IsNumeric(type)) return unsupported();
    info.output_type = arrow::float64();
  } else if (f == "agg_min" || f == "agg_max") {
    if (!IsOrderable(type)) return unsupported();
    info.output_type = info.input_type;
  } else if (f == "agg_count" || f == "agg_approx_count_distinct") {
    if (type.id() == arrow::Type::EXTENSION && f == "agg_approx_count_distinct") return unsupported();
    info.output_type = arrow::uint64();
  } else if (f == "agg_any_value") {
    info.output_type = info.input_type;
  } else if (f == "agg_list") {
    info.output_type = arrow::large_list(info.input_type);
  } else if (f == "agg_concat") {
    if (!arrow::is_string(type.id())) return unsupported();
    info.output_type = arrow::large_utf8();
  } else if (IsMoreAggregation(f)) {
    ARROW_ASSIGN_OR_RAISE(info.output_type, MoreAggregationOutputType(f, type, info.options));
    if (!info.output_type) return unsupported();
  } else {
    return arrow::Status::Invalid("unknown aggregation '", f, "'");
  }
  return info;
}

}  // namespace ketch
