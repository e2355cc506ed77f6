// partition_days / partition_hours / partition_months / partition_years: the Iceberg spec's
// day/hour/month/year transforms of dates and timestamps (any unit; a time zone does not change the
// UTC instant), floored before 1970.

#include <arrow/api.h>
#include <arrow/util/bitmap_ops.h>

#include "ketch/functions/partitioning/partition_common.h"
#include "ketch/functions/partitioning/partitioning_functions.h"

namespace ketch::partitioning {
namespace {

enum class Grain { kDay, kHour, kMonth, kYear };

constexpr int64_t kSecondsPerDay = 86400;

class TemporalTransform : public ScalarFunction {
 public:
  TemporalTransform(std::string name, Grain grain) : name_(std::move(name)), grain_(grain) {}

  std::string name() const override { return name_; }

  arrow::Result<std::shared_ptr<arrow::DataType>> ResolveType(
      const std::vector<std::shared_ptr<arrow::DataType>>& arg_types, const std::vector<ExprPtr>& arg_exprs,
      const FunctionOptions&) const override {
    ARROW_RETURN_NOT_OK(ExpectOneArgument(name_, arg_types, arg_exprs));
    const auto id = arg_types[0]->id();
    const bool is_date = id == arrow::Type::DATE32 || id == arrow::Type::DATE64;
    const bool is_timestamp = id == arrow::Type::TIMESTAMP;
    if (grain_ == Grain::kHour ? !is_timestamp : !(is_date || is_timestamp)) {
      return CannotApply(name_, arg_types, arg_exprs,
                         grain_ == Grain::kHour ? "expected a timestamp" : "expected a date or a timestamp");
    }
    return grain_ == Grain::kDay ? arrow::date32() : arrow::int32();
  }

  arrow::Result<arrow::Datum> Execute(const std::vector<arrow::Datum>& args, const FunctionOptions&,
                                      const EvalContext& ctx) const override {
    ARROW_ASSIGN_OR_RAISE(auto input, ToArray(args[0], ctx.num_rows));
    const auto& type = *input->type();
    // Each value as ticks of `per_day` to the day (dates: 1 or 86,400,000; timestamps: by unit).
    int64_t per_day = 1;
    int64_t per_hour = 1;
    if (type.id() == arrow::Type::DATE64) per_day = kSecondsPerDay * 1000;
    if (type.id() == arrow::Type::TIMESTAMP) {
      const int64_t per_second = TicksPerSecond(static_cast<const arrow::TimestampType&>(type).unit());
      per_day = kSecondsPerDay * per_second;
      per_hour = 3600 * per_second;
    }
    const int64_t n = input->length();
    std::vector<int64_t> ticks(static_cast<size_t>(n));
    if (type.id() == arrow::Type::DATE32) {
      const auto* raw = static_cast<const arrow::Date32Array&>(*input).raw_values();
      for (int64_t i = 0; i < n; ++i) ticks[i] = raw[i];
    } else {
      // date64 and timestamp are both int64 storage.
      const auto* raw = input->data()->GetValues<int64_t>(1);
      for (int64_t i = 0; i < n; ++i) ticks[i] = raw[i];
    }
    std::vector<int32_t> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      if (input->IsNull(i)) continue;
      int64_t value;
      if (grain_ == Grain::kHour) {
        value = temporal::FloorDiv(ticks[i], per_hour);
      } else {
        const int64_t days = temporal::FloorDiv(ticks[i], per_day);
        if (grain_ == Grain::kDay) {
          value = days;
        } else {
          const auto civil = temporal::CivilFromDays(days);
          value = grain_ == Grain::kYear ? civil.year - 1970 : (civil.year - 1970) * 12 + civil.month - 1;
        }
      }
      if (value < INT32_MIN || value > INT32_MAX) {
        return arrow::Status::Invalid(name_, ": the value at source row ", ctx.SourceRow(i),
                                      " is out of range for int32");
      }
      out[i] = static_cast<int32_t>(value);
    }
    auto values = arrow::Buffer::FromVector(std::move(out));
    auto validity = input->null_count() > 0 ? input->data()->buffers[0] : nullptr;
    if (validity && input->offset() != 0) {
      ARROW_ASSIGN_OR_RAISE(validity, arrow::internal::CopyBitmap(arrow::default_memory_pool(),
                                                                  validity->data(), input->offset(), n));
    }
    auto result_type = grain_ == Grain::kDay ? arrow::date32() : arrow::int32();
    return arrow::Datum(
        arrow::MakeArray(arrow::ArrayData::Make(result_type, n, {validity, values}, input->null_count())));
  }

 private:
  std::string name_;
  Grain grain_;
};

}  // namespace

arrow::Status RegisterTemporalTransforms() {
  auto* registry = FunctionRegistry::Global();
  ARROW_RETURN_NOT_OK(registry->Register(std::make_shared<TemporalTransform>("partition_days", Grain::kDay)));
  ARROW_RETURN_NOT_OK(
      registry->Register(std::make_shared<TemporalTransform>("partition_hours", Grain::kHour)));
  ARROW_RETURN_NOT_OK(
      registry->Register(std::make_shared<TemporalTransform>("partition_months", Grain::kMonth)));
  return registry->Register(std::make_shared<TemporalTransform>("partition_years", Grain::kYear));
}

}  // namespace ketch::partitioning
