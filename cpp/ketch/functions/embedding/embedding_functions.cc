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

// One side of a distance: a column of vectors, or one vector for every row (a literal query).
// Row i's values are values[Offset(i), Offset(i) + Length(i)); float32 and float64 values are read
// in place, integers are cast to float64 once (Arrow's cast).
struct Side {
  std::shared_ptr<arrow::Array> list;    // the column; null for a constant side
  std::shared_ptr<arrow::Array> values;  // float or double
  bool constant_valid = true;            // a constant side: whether it is non-null
  bool has_null_values = false;

  bool IsNull(int64_t i) const { return list ? list->IsNull(i) : !constant_valid; }
  int64_t Offset(int64_t i) const {
    if (!list) return 0;
    if (list->type_id() == arrow::Type::FIXED_SIZE_LIST) {
      return static_cast<const arrow::FixedSizeListArray&>(*list).value_offset(i);
    }
    if (list->type_id() == arrow::Type::LIST)
      return static_cast<const arrow::ListArray&>(*list).value_offset(i);
    return static_cast<const arrow::LargeListArray&>(*list).value_offset(i);
  }
  int64_t Length(int64_t i) const {
    if (!list) return values->length();
    if (list->type_id() == arrow::Type::FIXED_SIZE_LIST) {
      return static_cast<const arrow::FixedSizeListArray&>(*list).value_length(i);
    }
    if (list->type_id() == arrow::Type::LIST)
      return static_cast<const arrow::ListArray&>(*list).value_length(i);
    return static_cast<const arrow::LargeListArray&>(*list).value_length(i);
  }
  bool AnyNullValue(int64_t offset, int64_t n) const {
    if (!has_null_values) return false;
    for (int64_t k = 0; k < n; ++k) {
      if (values->IsNull(offset + k)) return true;
    }
    return false;
  }
};

std::shared_ptr<arrow::Array> ListValues(const arrow::Array& list) {
  if (list.type_id() == arrow::Type::FIXED_SIZE_LIST) {
    return static_cast<const arrow::FixedSizeListArray&>(list).values();
  }
  if (list.type_id() == arrow::Type::LIST) return static_cast<const arrow::ListArray&>(list).values();
  return static_cast<const arrow::LargeListArray&>(list).values();
}

arrow::Result<Side> MakeSide(const arrow::Datum& datum, int64_t num_rows) {
  Side side;
  std::shared_ptr<arrow::Array> values;
  if (datum.is_scalar()) {
    const auto& scalar = static_cast<const arrow::BaseListScalar&>(*datum.scalar());
    side.constant_valid = scalar.is_valid && scalar.value != nullptr;
    if (side.constant_valid) {
      values = scalar.value;
    } else {
      ARROW_ASSIGN_OR_RAISE(values, arrow::MakeArrayOfNull(arrow::float64(), 0));
    }
  } else {
    ARROW_ASSIGN_OR_RAISE(side.list, ToArray(datum, num_rows));
    values = ListValues(*side.list);
  }
  const auto id = values->type_id();
  if (id != arrow::Type::FLOAT && id != arrow::Type::DOUBLE) {
    auto options = arrow::compute::CastOptions::Safe(arrow::float64());
    options.allow_float_truncate = true;  // int64 beyond 2**53: nearest double
    ARROW_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(arrow::Datum(values), options));
    values = cast.make_array();
  }
  side.values = std::move(values);
  side.has_null_values = side.values->null_count() > 0;
  return side;
}

template <typename T>
const T* RawValues(const arrow::Array& values) {
  return reinterpret_cast<const T*>(values.data()->buffers[1]->data()) + values.offset();
}

enum class Metric { kCosine, kEuclidean, kDot, kPearson };

// One row's distance; false when it is undefined (cosine with a zero-norm side, Pearson with a
// constant side). Sums run in float64 whatever the input type (each value widened exactly), in
// index order.
template <typename X, typename Y>
bool RowDistance(Metric metric, const X* x, const Y* y, int64_t n, double* out) {
  if (metric == Metric::kDot) {
    double dot = 0;
    for (int64_t k = 0; k < n; ++k) dot += static_cast<double>(x[k]) * static_cast<double>(y[k]);
    *out = dot;
    return true;
  }
  if (metric == Metric::kPearson) {
    // Two passes (means first) for accuracy: r = sum(dx dy) / sqrt(sum(dx^2) sum(dy^2)).
    if (n == 0) return false;
    double mx = 0, my = 0;
    for (int64_t k = 0; k < n; ++k) {
      mx += static_cast<double>(x[k]);
      my += static_cast<double>(y[k]);
    }
    mx /= static_cast<double>(n);
    my /= static_cast<double>(n);
    double sxy = 0, sxx = 0, syy = 0;
    for (int64_t k = 0; k < n; ++k) {
      const double dx = static_cast<double>(x[k]) - mx, dy = static_cast<double>(y[k]) - my;
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
      const double d = static_cast<double>(x[k]) - static_cast<double>(y[k]);
      sum += d * d;
    }
    *out = std::sqrt(sum);
    return true;
  }
  double dot = 0, xx = 0, yy = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double a = static_cast<double>(x[k]), b = static_cast<double>(y[k]);
    dot += a * b;
    xx += a * a;
    yy += b * b;
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
    // A constant side (a query vector) is read as it is, never repeated for every row.
    ARROW_ASSIGN_OR_RAISE(auto a, MakeSide(args[0], ctx.num_rows));
    ARROW_ASSIGN_OR_RAISE(auto b, MakeSide(args[1], ctx.num_rows));
    const bool a_float = a.values->type_id() == arrow::Type::FLOAT;
    const bool b_float = b.values->type_id() == arrow::Type::FLOAT;
    if (a_float && b_float) return Distances<float, float>(a, b, ctx);
    if (a_float) return Distances<float, double>(a, b, ctx);
    if (b_float) return Distances<double, float>(a, b, ctx);
    return Distances<double, double>(a, b, ctx);
  }

 private:
  template <typename X, typename Y>
  arrow::Result<arrow::Datum> Distances(const Side& a, const Side& b, const EvalContext& ctx) const {
    arrow::DoubleBuilder out;
    ARROW_RETURN_NOT_OK(out.Reserve(ctx.num_rows));
    const X* av = RawValues<X>(*a.values);
    const Y* bv = RawValues<Y>(*b.values);
    for (int64_t i = 0; i < ctx.num_rows; ++i) {
      if (a.IsNull(i) || b.IsNull(i)) {
        out.UnsafeAppendNull();
        continue;
      }
      const int64_t n = a.Length(i);
      if (b.Length(i) != n) {
        return arrow::Status::Invalid(label(), " at row ", ctx.SourceRow(i), ": vectors have ", n, " and ",
                                      b.Length(i), " values");
      }
      const int64_t a_offset = a.Offset(i), b_offset = b.Offset(i);
      // A null element makes the distance unknown (its slot holds an arbitrary value).
      double distance = 0;
      if (!a.AnyNullValue(a_offset, n) && !b.AnyNullValue(b_offset, n) &&
          RowDistance(metric_, av + a_offset, bv + b_offset, n, &distance)) {
        out.UnsafeAppend(distance);
      } else {
        out.UnsafeAppendNull();
      }
    }
    return out.Finish();
  }

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
