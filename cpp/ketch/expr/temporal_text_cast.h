#pragma once

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <string>

namespace ketch {

/// True for timestamp → string / large_string and date32 → string / large_string, the casts
/// CastTemporalToText does.
bool IsTemporalTextCast(const arrow::DataType& from, const arrow::DataType& to);

/// Daft's text of a timestamp or date cast to a string (chrono's Display through arrow-rs):
/// a timestamp as "2024-01-02 03:04:05" with ".5" digits only where it has a fraction, in the
/// fewest of 3, 6 or 9 digits that hold it ("…:05.500", "…:05.000120"), then for a zoned type
/// " +00:00" (UTC and fixed offsets) or the zone's abbreviation (" EST" for America/New_York at
/// that instant); a date as year-month-day without zero padding ("2024-2-9", "5-1-1"). Nulls
/// stay null. Arrow's own cast writes the unit's full digits ("….000000") and padded dates.
arrow::Result<arrow::Datum> CastTemporalToText(const arrow::Datum& input,
                                               const std::shared_ptr<arrow::DataType>& to);

/// How a timestamp array becomes text: kDisplay as CastTemporalToText describes it; kRfc3339 as
/// Daft's strftime() without a format ("2024-01-02T03:04:05", the same fraction rule, then "Z" at
/// offset zero or "-05:00" for a zoned type).
enum class TimestampTextStyle { kRfc3339, kDisplay };
arrow::Result<std::shared_ptr<arrow::Array>> TimestampText(const std::shared_ptr<arrow::Array>& input,
                                                           TimestampTextStyle style);

/// Ticks of `unit` per second (1, 1e3, 1e6, 1e9).
int64_t TicksPerSecond(arrow::TimeUnit::type unit);

/// The sub-second part of a timestamp as chrono prints it: "" for none, else "." and the fewest
/// of 3, 6 or 9 digits that hold it exactly (".500", ".000120"). `ticks`: the value in its unit,
/// `per_second`: ticks per second (1, 1e3, 1e6 or 1e9); negative values count from the second
/// below (-1 ms is ".999" after 23:59:59).
std::string FractionText(int64_t ticks, int64_t per_second);

}  // namespace ketch
