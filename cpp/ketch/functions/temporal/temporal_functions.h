#pragma once

#include <arrow/status.h>
#include <arrow/type_fwd.h>

#include <cstdint>

namespace ketch::temporal {

/// Registers the temporal kernels whose behaviour depends on options or on the input's time zone
/// (Arrow's own field extractors — year, hour, day_of_week, ... — are reached by name):
///   dt_strftime(ts|date; format)          → large_string, chrono-style format (%Y, %S%.3f, ...)
///   dt_date(ts|date) → date32, dt_time(ts) → time32/time64 (local time for zoned timestamps)
///   dt_truncate(ts[, relative_to]; step_ns, interval) → ts floored to multiples of step
///   dt_replace_time_zone(ts; timezone?)   → same wall clock in `timezone` (naive when absent)
///   dt_convert_time_zone(ts; to_timezone, from_timezone?) → same instant shown in `to_timezone`
///   dt_to_unix_epoch(ts|date; unit)       → int64 since 1970-01-01 UTC in `unit` (floored)
///   dt_total(duration; unit)              → int64 whole `unit`s (s, ms, us, ns, min, h, d), truncated
/// Unknown time zones and unsupported format specifiers fail at plan time naming the zone / pattern.
arrow::Status RegisterTemporalFunctions();

/// Registers dt_add_interval(ts|date, month_day_nano interval; negate?) → the input's type: months
/// first (the day clamped to the target month's length), then days, then nanoseconds (truncated to
/// the timestamp's unit; whole days only for dates). Zoned timestamps move on their wall clock.
/// Called by RegisterTemporalFunctions.
arrow::Status RegisterIntervalArithmetic();

/// Registers current_date() → date32 and current_timestamp() → timestamp[us] (naive, UTC): the
/// system clock read when a kernel call runs, one value per call (morsel). No arguments.
/// Called by RegisterTemporalFunctions.
arrow::Status RegisterCurrentTimeFunctions();

/// Registers the Spark-style kernels behind ketch.functions (spark_date_functions.cc):
///   spark_make_date(y, m, d) → date32, null for an impossible date
///   spark_make_timestamp(y, m, d, h, mi, s) → timestamp[us], null for an impossible combination
///   spark_add_months(date|ts, int) → date32, the day clamped to the target month's length
///   spark_months_between(end, start) → float64, Spark's monthsBetween rounded to 8 places
///   spark_to_utc_timestamp(ts; timezone) → naive timestamp, error in DST gaps and overlaps
/// Called by RegisterTemporalFunctions.
arrow::Status RegisterSparkDateFunctions();

/// Nanoseconds in one `unit` (seconds: 1e9 ... nanoseconds: 1).
int64_t NanosPerUnit(arrow::TimeUnit::type unit);

/// Nanoseconds in one day.
constexpr int64_t kNanosPerDay = 86'400'000'000'000LL;

}  // namespace ketch::temporal
