#pragma once

#include <arrow/status.h>

namespace ketch::partitioning {

/// Registers Daft's partition transforms and id generators (daft.functions.partition, misc):
/// - partition_days (date or timestamp of any unit and time zone) → date32: the UTC day;
/// - partition_hours (timestamp) → int32: hours since 1970-01-01T00:00 UTC;
/// - partition_months, partition_years (date or timestamp) → int32: months / years since 1970-01.
///   All four are the Iceberg spec's day/hour/month/year transforms, rounded towards negative
///   infinity before 1970 (Iceberg's Java reference; Daft 0.7.26 truncates hours towards zero and
///   scales nanosecond timestamps wrongly: Ketch follows the spec there).
/// - partition_iceberg_bucket (; n) → int32: `(murmur3_x86_32(bytes, seed 0) & INT32_MAX) % n` with
///   the bytes of the Iceberg spec, appendix B: integers, dates (days), times (micros) and
///   timestamps (micros: nanosecond ones floored to micros, as Daft) as 8-byte little-endian
///   longs; strings as UTF-8; binaries as their bytes; decimals as the minimal big-endian two's
///   complement bytes of the unscaled value; uuids as their 16 bytes. Invalid when n <= 0 or
///   n > 2^31 - 1.
/// - partition_iceberg_truncate (; w) → the input type: integers `v - (((v % w) + w) % w)`,
///   decimals the same on the unscaled value, strings their first w code points (the spec; Daft
///   0.7.26 cuts at w bytes), binaries their first w bytes. Invalid when w <= 0.
/// - uuid (no arguments) → arrow.uuid: RFC 9562 version 4, 122 bits from the OS's CSPRNG
///   (getrandom / arc4random_buf) per row.
/// - uuidv7 (no arguments) → arrow.uuid: RFC 9562 version 7: the 48-bit Unix time in ms of the
///   call, then 74 bits that start random and grow by a random step of 1..2^32 per row (RFC 9562
///   §6.2 method 2), so the values of one batch are strictly increasing.
/// - extract_minute_uuid7 / extract_hour_uuid7 / extract_day_uuid7 / extract_month_uuid7 (uuid or
///   fixed_size_binary(16)) → int64: the embedded Unix ms floored to minutes / hours / days since
///   1970-01-01, or `(year - 1970) * 12 + month - 1`.
/// Bad argument types fail at plan time with a TypeError naming the function, argument and type.
arrow::Status RegisterPartitioningFunctions();

}  // namespace ketch::partitioning
