#pragma once

#include <arrow/api.h>
#include <arrow/compute/api.h>

namespace ketch {

/// True for Arrow's canonical `arrow.uuid` extension type (16 bytes per value, Daft's UUID).
bool IsUuidType(const arrow::DataType& type);

/// Casts between UUID and text that Arrow's kernels do not do: UUID → string / large_string gives
/// the canonical lowercase hyphenated form ("2d3b2f0e-6c5e-4f0e-9a7d-1b2c3d4e5f60", RFC 9562 §4);
/// string → UUID parses 32 hex digits of either case, hyphenated 8-4-4-4-12 or not. UUID ↔ binary
/// / large_binary / fixed_size_binary(16) copies the 16 bytes (binary → UUID: 16 bytes each).
bool IsUuidCast(const arrow::DataType& from, const arrow::DataType& to);

/// Runs one of the casts IsUuidCast accepts on an array or a scalar (`num_rows`: the length a
/// scalar is broadcast to). Invalid names the first text that is not a UUID.
arrow::Result<arrow::Datum> CastUuid(const arrow::Datum& input, const std::shared_ptr<arrow::DataType>& to,
                                     int64_t num_rows);

}  // namespace ketch
