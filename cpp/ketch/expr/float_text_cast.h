#pragma once

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include <string>

namespace ketch {

/// Daft's text of a float (arrow-rs's cast, which writes floats with lexical-core's default
/// format): the shortest digits that read back as the same value (of the value's own width:
/// float32 0.1 is "0.1"), plain when the decimal exponent is in [-5, 16) ("0.00001", "100000.0",
/// "9007199254740992.0", "-0.0"), scientific otherwise without a plus sign or padding ("1e16",
/// "1.5e-6", "5e-324"); "NaN", "inf", "-inf". Arrow's own cast writes "2" and "1e+16".
std::string FloatText(double value);
std::string FloatText(float value);

/// True for float32 / float64 → string / large_string, the casts CastFloatToText does.
bool IsFloatTextCast(const arrow::DataType& from, const arrow::DataType& to);

/// Casts a float array or scalar to text with FloatText (nulls stay null).
arrow::Result<arrow::Datum> CastFloatToText(const arrow::Datum& input,
                                            const std::shared_ptr<arrow::DataType>& to);

}  // namespace ketch
