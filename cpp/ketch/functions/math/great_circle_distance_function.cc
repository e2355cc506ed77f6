// great_circle_distance(lat1, lon1, lat2, lon2): Daft 0.7.26's distance in metres between two
// points on the Earth, by the haversine formula on a sphere of the mean Earth radius
// (6,371 km, the value Daft uses). Arguments are degrees, any numeric type
// (cast to Float64). A null, a non-finite value, or a latitude outside [-90, 90] / longitude
// outside [-180, 180] gives null (Daft's rule), never an error.

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <cmath>
#include <numbers>

#include "ketch/expr/function_registry.h"
#include "ketch/functions/math/math_functions.h"

namespace ketch::math {
namespace {

constexpr double kEarthRadiusMetres = 6371000.0;

class GreatCircleDistanceFunction : public ScalarFunction {
 public:
  std::string name() const override { return "great_circle_distance"; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    if (arg_types.size() != 4) {
      return arrow::Status::Invalid("great_circle_distance takes 4 arguments (lat1, lon1, lat2, lon2), got ",
                                    arg_types.size());
    }
    for (size_t i = 0; i < 4; ++i) {
      const auto id = arg_types[i]->id();
      if (!arrow::is_integer(id) && !arrow::is_floating(id) && id != arrow::Type::NA) {
        return arrow::Status::TypeError("great_circle_distance expects numeric degrees, but ",
                                        arg_exprs[i]->ToString(), " has type ", arg_types[i]->ToString());
      }
    }
    return arrow::float64();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    std::vector<std::shared_ptr<arrow::DoubleArray>> in;
    for (const auto& arg : args) {
      ARROW_ASSIGN_OR_RAISE(auto array, ToArray(arg, ctx.num_rows));
      ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(array, arrow::float64()));
      in.push_back(std::static_pointer_cast<arrow::DoubleArray>(cast.make_array()));
    }
    arrow::DoubleBuilder builder;
    ARROW_RETURN_NOT_OK(builder.Reserve(ctx.num_rows));
    constexpr double kRadians = std::numbers::pi / 180.0;
    for (int64_t i = 0; i < ctx.num_rows; ++i) {
      bool valid = true;
      double v[4];
      for (int k = 0; k < 4 && valid; ++k) {
        valid = in[k]->IsValid(i) && std::isfinite(in[k]->Value(i));
        if (valid) v[k] = in[k]->Value(i);
      }
      valid = valid && std::abs(v[0]) <= 90.0 && std::abs(v[2]) <= 90.0 && std::abs(v[1]) <= 180.0 &&
              std::abs(v[3]) <= 180.0;
      if (!valid) {
        builder.UnsafeAppendNull();
        continue;
      }
      const double phi1 = v[0] * kRadians, phi2 = v[2] * kRadians;
      const double dphi = (v[2] - v[0]) * kRadians, dlambda = (v[3] - v[1]) * kRadians;
      const double h = std::sin(dphi / 2) * std::sin(dphi / 2) +
                       std::cos(phi1) * std::cos(phi2) * std::sin(dlambda / 2) * std::sin(dlambda / 2);
      builder.UnsafeAppend(2.0 * kEarthRadiusMetres * std::asin(std::sqrt(std::min(1.0, h))));
    }
    return builder.Finish();
  }
};

}  // namespace

arrow::Status RegisterGreatCircleDistanceFunction() {
  return FunctionRegistry::Global()->Register(std::make_shared<GreatCircleDistanceFunction>());
}

}  // namespace ketch::math
