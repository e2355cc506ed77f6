#pragma once

#include <arrow/api.h>
#include <arrow/compute/api.h>

namespace ketch {

/// True for a float (float16/32/64) → integer cast, the casts NullUnrepresentableFloats prepares.
bool IsFloatToIntegerCast(const arrow::DataType& from, const arrow::DataType& to);

/// Daft's float → integer cast keeps the integer part (1.9 → 1, -1.9 → -1) and gives null where
/// there is none the target type holds: NaN, ±inf and values whose integer part is out of its range
/// (-1.5 → uint8 is null, 3e9 → int32 is null). Arrow's truncating cast would write garbage there
/// (NaN → INT64_MIN). Returns `input` (a float array or scalar) with those values made null, ready
/// for Arrow's cast with `allow_float_truncate`.
arrow::Result<arrow::Datum> NullUnrepresentableFloats(const arrow::Datum& input, const arrow::DataType& to);

}  // namespace ketch
