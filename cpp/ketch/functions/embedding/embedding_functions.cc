#include "ketch/functions/embedding/embedding_functions.h"

#include <arrow/compute/api.h>

#include <cmath>

#include "ketch/expr/function_registry.h"

namespace ketch::embedding {
namespace {

bool IsNumericList(const arrow::DataType& type) {
  const auto id = type.id();
  if (id != arrow::Type::FIXED_SIZE_LIST && id != arrow::Type::LIST && id != arrow::Type::LARGE_LIST)
    return false;
  const auto value_id = type.field(0)->type()->id();
  return arrow::is_integer(value_id) || arrow::is_floating(value_id);
}

// Rows as (offset, length) into one flat float64 array.
struct Vectors {
  std::shared_ptr<arrow::Array> list;
  std::shared_ptr<arrow::DoubleArray> values;
  int64_t Offset(int64_t i) const {
    if (list->type_id() == arrow::Type::FIXED_SIZE_LIST) {
      return static_cast<const arrow::FixedSizeListArray&>(*list).value_offset(i);
    }
    if (list->type_id() == arrow::Type::LIST)
      return static_cast<const arrow::ListArray&>(*list).value_offset(i);
    return static_cast<const arrow::LargeListArray&>(*list).value_offset(i);
  }
  int64_t Length(int64_t i) const {
    if (list->type_id() == arrow::Type::FIXED_SIZE_LIST) {
      return static_cast<const arrow::FixedSizeListArray&>(*list).value_length(i);
    }
    if (list->type_id() == arrow::Type::LIST)
      return static_cast<const arrow::ListArray&>(*list).value_length(i);
    return static_cast<const arrow::LargeListArray&>(*list).value_length(i);
  }
};

arrow::Result<Vectors> Flatten(const std::shared_ptr<arrow::Array>& array) {
  Vectors v;
  v.list = array;
  std::shared_ptr<arrow::Array> values;
  if (array->type_id() == arrow::Type::FIXED_SIZE_LIST) {
    values = static_cast<const arrow::FixedSizeListArray&>(*array).values();
  } else if (array->type_id() == arrow::Type::LIST) {
    values = static_cast<const arrow::ListArray&>(*array).values();
  } else {
    values = static_cast<const arrow::LargeListArray&>(*array).values();
  }
  auto options = arrow::compute::CastOptions::Safe(arrow::float64());
  options.allow_float_truncate = true;  // int64 beyond 2**53: nearest double
  ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(arrow::Datum(values), options));
  v.values = std::static_pointer_cast<arrow::DoubleArray>(cast.make_array());
  return v;
}

enum class Metric { kCosine, kEuclidean, kDot, kPearson };

// One row's distance; false when it is undefined (cosine with a zero-norm side, Pearson with a
// constant side).
bool RowDistance(Metric metric, const double* x, const double* y, int64_t n, double* out) {
  if (metric == Metric::kDot) {
    double dot = 0;
    for (int64_t k = 0; k < n; ++k) dot += x[k] * y[k];
    *out = dot;
    return true;
  }
  if (metric == Metric::kPearson) {
    // Two passes (means first) for accuracy: r = sum(dx dy) / sqrt(sum(dx^2) sum(dy^2)).
    if (n == 0) return false;
    double mx = 0, my = 0;
    for (int64_t k = 0; k < n; ++k) {
      mx += x[k];
      my += y[k];
    }
    mx /= static_cast<double>(n);
    my /= static_cast<double>(n);
    double sxy = 0, sxx = 0, syy = 0;
    for (int64_t k = 0; k < n; ++k) {
      const double dx = x[k] - mx, dy = y[k] - my;
      sxy += dx * dy;
      sxx += dx * dx;
      syy += dy * dy;
    }
    if (sxx == 0 || syy == 0) return false;
    *out = sxy / std::sqrt(sxx * syy);
    return true;
  }
  if (metric == Metric::kEuclidean) {
    double sum = 0;
    for (int64_t k = 0; k < n; ++k) {
      const double d = x[k] - y[k];
      sum += d * d;
    }
    *out = std::sqrt(sum);
    return true;
  }
  double dot = 0, xx = 0, yy = 0;
  for (int64_t k = 0; k < n; ++k) {
    dot += x[k] * y[k];
    xx += x[k] * x[k];
    yy += y[k] * y[k];
  }
  if (xx == 0 || yy == 0) return false;
  *out = 1.0 - dot / (std::sqrt(xx) * std::sqrt(yy));
  return true;
}

class VectorDistance : public ScalarFunction {
 public:
  explicit VectorDistance(Metric metric) : metric_(metric) {}

  std::string name() const override { return std::string("embedding_") + label(); }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& types, const std::vector<ExprPtr>& exprs,
      const FunctionOptions&) const override {
    if (types.size() != 2) return arrow::Status::Invalid(label(), " takes 2 arguments");
    for (size_t i = 0; i < 2; ++i) {
      if (!IsNumericList(*types[i])) {
        return arrow::Status::TypeError("embedding.", label(),
                                        " expects Embedding (fixed-size list of numbers) ", "inputs, but ",
                                        exprs[i]->ToString(), " has type ", types[i]->ToString());
      }
    }
    return arrow::float64();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto left_array, ToArray(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto right_array, ToArray(args[1], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto a, Flatten(left_array));
    ARROW_ASSIGN_OR_RAISE(auto b, Flatten(right_array));
    arrow::DoubleBuilder out;
    ARROW_RETURN_NOT_OK(out.Reserve(ctx.num_rows));
    const double* av = a.values->raw_values();
    const double* bv = b.values->raw_values();
    for (int64_t i = 0; i < ctx.num_rows; ++i) {
      if (a.list->IsNull(i) || b.list->IsNull(i)) {
        out.UnsafeAppendNull();
        continue;
      }
      const int64_t n = a.Length(i);
      if (b.Length(i) != n) {
        return arrow::Status::Invalid(label(), " at row ", ctx.SourceRow(i), ": vectors have ", n, " and ",
                                      b.Length(i), " values");
      }
      // A null element makes the distance unknown (its slot holds an arbitrary value).
      bool null_element = false;
      for (int64_t k = 0; k < n && !null_element; ++k) {
        null_element = a.values->IsNull(a.Offset(i) + k) || b.values->IsNull(b.Offset(i) + k);
      }
      if (null_element) {
        out.UnsafeAppendNull();
        continue;
      }
      double distance = 0;
      if (RowDistance(metric_, av + a.Offset(i), bv + b.Offset(i), n, &distance)) {
        out.UnsafeAppend(distance);
      } else {
        out.UnsafeAppendNull();
      }
    }
    return out.Finish();
  }

 private:
  const char* label() const {
    switch (metric_) {
      case Metric::kCosine:
        return "cosine_distance";
      case Metric::kEuclidean:
        return "euclidean_distance";
      case Metric::kDot:
        return "dot_product";
      case Metric::kPearson:
        return "pearson_correlation";
    }
    return "?";
  }

  Metric metric_;
};

}  // namespace

arrow::Status RegisterEmbeddingFunctions() {
  ARROW_RETURN_NOT_OK(
      FunctionRegistry::Global()->Register(std::make_shared<VectorDistance>(Metric::kCosine)));
  ARROW_RETURN_NOT_OK(
      FunctionRegistry::Global()->Register(std::make_shared<VectorDistance>(Metric::kEuclidean)));
  ARROW_RETURN_NOT_OK(FunctionRegistry::Global()->Register(std::make_shared<VectorDistance>(Metric::kDot)));
  return FunctionRegistry::Global()->Register(std::make_shared<VectorDistance>(Metric::kPearson));
}

}  // namespace ketch::embedding
