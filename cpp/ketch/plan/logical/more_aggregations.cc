#include "ketch/plan/logical/more_aggregations.h"

#include <cstdlib>
#include <sstream>

namespace ketch {
namespace {

bool Numeric(const arrow::DataType& type) {
  return arrow::is_integer(type.id()) || arrow::is_floating(type.id());
}

// Types Arrow's grouper hashes (count_distinct, set): not nested, not extension.
bool Flat(const arrow::DataType& type) {
  return type.id() != arrow::Type::EXTENSION && !arrow::is_nested(type.id());
}

const arrow::Scalar* Option(const FunctionOptions& options, const std::string& key) {
  auto it = options.find(key);
  if (it == options.end() || !it->second || !it->second->is_valid) return nullptr;
  return it->second.get();
}

}  // namespace

bool IsMoreAggregation(const std::string& f) {
  return f == "agg_product" || f == "agg_bool_and" || f == "agg_bool_or" || f == "agg_count_distinct" ||
         f == "agg_set" || f == "agg_var" || f == "agg_skew" || f == "agg_approx_percentiles" ||
         f == "agg_percentile";
}

arrow::Result<std::vector<double>> AggregationPercentiles(const FunctionOptions& options) {
  const arrow::Scalar* text = Option(options, "percentiles");
  if (!text || !arrow::is_string(text->type->id())) {
    return arrow::Status::Invalid("approx_percentiles needs percentiles (a float or a list of floats)");
  }
  std::vector<double> out;
  std::stringstream in{std::string(static_cast<const arrow::BaseBinaryScalar&>(*text).view())};
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const double p = std::strtod(item.c_str(), &end);
    if (end == item.c_str() || *end != '\0') {
      return arrow::Status::Invalid("approx_percentiles: '", item, "' is not a number");
    }
    if (!(p >= 0.0 && p <= 1.0)) {
      return arrow::Status::Invalid("approx_percentiles: percentiles must be between 0 and 1, got ", item);
    }
    out.push_back(p);
  }
  if (out.empty()) return arrow::Status::Invalid("approx_percentiles needs at least one percentile");
  return out;
}

arrow::Result<double> AggregationPercentage(const FunctionOptions& options) {
  const arrow::Scalar* value = Option(options, "percentage");
  if (!value) return arrow::Status::Invalid("percentile needs a percentage between 0 and 1");
  ARROW_ASSIGN_OR_RAISE(auto as_double, value->CastTo(arrow::float64()));
  const double p = static_cast<const arrow::DoubleScalar&>(*as_double).value;
  if (!(p >= 0.0 && p <= 1.0)) {
    return arrow::Status::Invalid("percentile: percentage must be between 0 and 1, got ", p);
  }
  return p;
}

arrow::Result<int> AggregationDdof(const FunctionOptions& options, int fallback) {
  const arrow::Scalar* value = Option(options, "ddof");
  if (!value) return fallback;
  ARROW_ASSIGN_OR_RAISE(auto as_int, value->CastTo(arrow::int64()));
  const int64_t ddof = static_cast<const arrow::Int64Scalar&>(*as_int).value;
  if (ddof < 0) return arrow::Status::Invalid("ddof must be >= 0, got ", ddof);
  return static_cast<int>(ddof);
}

arrow::Result<std::shared_ptr<arrow::DataType>> MoreAggregationOutputType(const std::string& f,
                                                                          const arrow::DataType& type,
                                                                          const FunctionOptions& options) {
  std::shared_ptr<arrow::DataType> none;
  if (f == "agg_product") {
    if (!Numeric(type)) return none;
    return arrow::is_floating(type.id())           ? arrow::float64()
           : arrow::is_unsigned_integer(type.id()) ? arrow::uint64()
                                                   : arrow::int64();
  }
  if (f == "agg_bool_and" || f == "agg_bool_or") {
    if (type.id() != arrow::Type::BOOL && type.id() != arrow::Type::NA) return none;
    return arrow::boolean();
  }
  if (f == "agg_count_distinct") {
    if (!Flat(type)) return none;
    return arrow::uint64();
  }
  if (f == "agg_set") {
    if (!Flat(type)) return none;
    return arrow::large_list(type.GetSharedPtr());
  }
  if (f == "agg_var" || f == "agg_skew") {
    if (!Numeric(type)) return none;
    if (f == "agg_var") ARROW_RETURN_NOT_OK(AggregationDdof(options, 1).status());
    return arrow::float64();
  }
  if (f == "agg_approx_percentiles") {
    if (!Numeric(type)) return none;
    ARROW_ASSIGN_OR_RAISE(auto percentiles, AggregationPercentiles(options));
    const arrow::Scalar* scalar = Option(options, "scalar");
    if (scalar && scalar->type->id() == arrow::Type::BOOL &&
        static_cast<const arrow::BooleanScalar&>(*scalar).value) {
      return arrow::float64();
    }
    return arrow::fixed_size_list(arrow::float64(), static_cast<int32_t>(percentiles.size()));
  }
  if (f == "agg_percentile") {
    if (!Numeric(type)) return none;
    ARROW_RETURN_NOT_OK(AggregationPercentage(options).status());
    return arrow::float64();
  }
  return arrow::Status::Invalid("unknown aggregation '", f, "'");
}

}  // namespace ketch
