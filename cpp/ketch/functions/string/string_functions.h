#pragma once

#include <arrow/status.h>

namespace ketch::str {

/// Registers Daft's string functions (all take a string / large_string first argument, checked at
/// plan time; a literal regex is compiled at plan time and a bad one names the pattern):
/// - utf8_contains / starts_with / ends_with (pattern) → bool; regexp_match (pattern) → bool
///   (RE2 syntax, matches anywhere); like / ilike (pattern: SQL `%` and `_`) → bool.
/// - replace (pattern, replacement), regexp_replace (pattern, replacement: RE2 `\1` groups) → string.
/// - split (pattern), regexp_split (pattern) → list<string>.
/// - regexp_count (pattern, ignore_case) → uint64: non-overlapping matches.
/// - regexp_extract (pattern, index) → string: group `index` (0: the whole match) of the first
///   match, null when nothing matches.
/// - lower, upper, capitalize (first character upper, the rest lower), reverse (by code point),
///   lstrip / rstrip / strip (Unicode whitespace) → string.
/// - length (code points), length_bytes (bytes) → uint64.
/// - left (n), right (n), substr (start, length: -1 = to the end), all in code points → string.
/// - lpad / rpad (length, pad: one character) → string: truncated to `length` code points first
///   (as Daft), then padded.
/// - normalize_nfd → string (Unicode NFD).
/// - to_date (format) → date32, to_datetime (format, timezone) → timestamp[us] (strptime formats;
///   a string that does not parse is an error naming it).
/// - find (substr) → int64: code point index of the first occurrence, -1 when absent.
/// - struct_get (field) → the field's type.
arrow::Status RegisterStringFunctions();

}  // namespace ketch::str
