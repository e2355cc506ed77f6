#pragma once

// Shared by the partitioning kernels: reading date/time/timestamp values in a common unit and the
// plan-time argument checks.

#include <arrow/api.h>

#include <memory>
#include <string>
#include <vector>

#include "ketch/expr/function_registry.h"
#include "ketch/expr/temporal_text_cast.h"  // TicksPerSecond
#include "ketch/functions/temporal/civil_date.h"

namespace ketch::partitioning {

/// `value` ticks of `unit` as microseconds, floored (nanoseconds before 1970 round down).
inline int64_t ToMicros(int64_t value, arrow::TimeUnit::type unit) {
  const int64_t per_second = TicksPerSecond(unit);
  if (per_second >= 1000000) return temporal::FloorDiv(value, per_second / 1000000);
  return value * (1000000 / per_second);
}

/// Exactly one argument, no more: else the plan-time error naming the function.
inline arrow::Status ExpectOneArgument(const std::string& name,
                                       const std::vector<std::shared_ptr<arrow::DataType>>& arg_types,
                                       const std::vector<ExprPtr>& arg_exprs) {
  if (arg_types.size() != 1) {
    return CannotApply(name, arg_types, arg_exprs, name + " takes exactly one argument");
  }
  return arrow::Status::OK();
}

}  // namespace ketch::partitioning
