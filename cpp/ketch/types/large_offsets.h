#pragma once

// Arrays over 2 GiB. binary, string and list index their values with 32-bit offsets (at most
// 2**31 - 1 bytes or elements in one array); large_binary, large_string and large_list use 64-bit
// offsets. Results that overflow the former are combined as the latter.

#include <arrow/api.h>

#include <memory>

namespace ketch {

/// `type` with every 32-bit-offset type, however deeply nested (struct, list, large_list and
/// fixed_size_list children), replaced by its 64-bit variant; other types are returned as they are.
std::shared_ptr<arrow::DataType> WithLargeOffsets(const std::shared_ptr<arrow::DataType>& type);

/// Whether some part of `type` uses 32-bit offsets.
bool HasSmallOffsets(const std::shared_ptr<arrow::DataType>& type);

/// One array of the chunks' values (all of one type): of their own type when the values fit
/// there, else of WithLargeOffsets(type). One chunk is returned as it is.
arrow::Result<std::shared_ptr<arrow::Array>> ConcatenateWidening(
    const arrow::ArrayVector& chunks, const std::shared_ptr<arrow::DataType>& type);

/// `array` with its values copied to the start of new buffers when it is a slice (offset > 0):
/// a narrowing cast (large_binary → binary) checks the absolute offsets, which a slice of a large
/// array exceeds even when its own values fit.
arrow::Result<std::shared_ptr<arrow::Array>> Compact(const std::shared_ptr<arrow::Array>& array);

}  // namespace ketch
