#pragma once

#include <arrow/api.h>
#include <arrow/datum.h>

#include <string>

namespace ketch {

/// True when `a` and `b` are lists (list, large_list, fixed_size_list) or structs of the same
/// shape, whose values `==`, `!=`, `<`, `<=`, `>` and `>=` compare (Arrow's kernels do not).
bool IsNestedComparison(const arrow::DataType& a, const arrow::DataType& b);

/// `name` ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal") of two nested
/// columns, row by row (`num_rows`: the length scalars are broadcast to). Lists compare
/// lexicographically (element by element, then the shorter first), structs field by field in
/// order; a null row gives null, and so does a null element met before the values differ (Daft's
/// rule: [1, null] == [1, null] is null, [1, null] < [2] is true). Boolean result.
arrow::Result<arrow::Datum> CompareNested(const std::string& name, const arrow::Datum& a,
                                          const arrow::Datum& b, int64_t num_rows);

}  // namespace ketch
