#pragma once

#include <arrow/api.h>
#include <arrow/compute/api.h>

namespace ketch {

/// True for a text (string / large_string) → number, boolean, date or timestamp cast, and for an
/// integer → integer cast: the casts CastTextLeniently does when Arrow's strict cast fails.
bool IsTextParseCast(const arrow::DataType& from, const arrow::DataType& to);

/// Daft's cast of text: a value that does not parse becomes null instead of failing the query
/// ("x" → int64 is null, "3.5" → int64 is null, "2023-02-29" → date is null). Numbers and dates
/// are read after trimming surrounding whitespace (" 2" → 2); booleans accept, in any case,
/// true / t / yes / y / on / 1 and false / f / no / n / off / 0 (arrow-rs's words, which Daft
/// uses). An integer out of the target's range (300 → int8, -1 → uint8) is null too, as in Daft.
/// Called when Arrow's strict cast of the whole array failed; values are re-cast one by one where a
/// (trimmed) whole-array cast still fails.
arrow::Result<arrow::Datum> CastTextLeniently(const arrow::Datum& input,
                                              const std::shared_ptr<arrow::DataType>& to,
                                              const arrow::compute::CastOptions& options);

}  // namespace ketch
