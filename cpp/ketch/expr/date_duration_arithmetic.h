#pragma once

#include <arrow/api.h>

#include <memory>
#include <string>
#include <vector>

namespace ketch {

/// add / subtract of a date and a duration (``date + duration``, ``duration + date``, ``date -
/// duration``): Daft gives a date, moved by the duration's whole days truncated toward zero
/// (2024-02-29 - 26 h is 2024-02-28; 2023-01-01 + -1 s stays 2023-01-01). Arrow's kernels would
/// widen to a timestamp. `name`: add, add_checked, subtract or subtract_checked.
bool IsDateDurationArithmetic(const std::string& name,
                              const std::vector<std::shared_ptr<arrow::DataType>>& types);

/// The date32 result of IsDateDurationArithmetic's operations; `num_rows` for scalar arguments.
/// Invalid on a date out of date32's range.
arrow::Result<arrow::Datum> DateDurationArithmetic(const std::string& name,
                                                   const std::vector<arrow::Datum>& args, int64_t num_rows);

}  // namespace ketch
