#pragma once

#include <arrow/api.h>

#include <memory>
#include <string>

namespace ketch::temporal {

/// dt_strftime's fast path: formats a naive timestamp (any unit) or date32 array with a chrono
/// format made only of fixed-width numeric fields (%Y %y %m %d %H %M %S %j, %F = %Y-%m-%d,
/// %T = %H:%M:%S, %%) and literal text, straight into a large_string array (days to civil dates by
/// Howard Hinnant's days_from_civil inverse, http://howardhinnant.github.io/date_algorithms.html).
/// Arrow's strftime formats each value through a std::ostream (about 2 us a value); this is ~20 ns.
/// Returns nullptr when the format, the type or a value (a year outside 0-9999) is not covered:
/// the caller then takes Arrow's path, whose output is the same.
arrow::Result<std::shared_ptr<arrow::Array>> FastStrftime(const arrow::Array& input,
                                                          const std::string& chrono);

}  // namespace ketch::temporal
