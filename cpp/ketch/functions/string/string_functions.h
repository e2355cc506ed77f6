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
/// Ketch's own kernels over Unicode code points (string_distance.cc, string_case.cc,
/// string_misc.cc; every string argument a column or a literal, null in → null out):
/// - levenshtein_distance, damerau_levenshtein_distance (OSA), hamming_distance_str (null when
///   the lengths differ) (a, b) → int64; jaro_similarity, jaro_winkler_similarity (a, b) → float64.
/// - to_camel_case, to_upper_camel_case, to_snake_case, to_upper_snake_case, to_kebab_case,
///   to_upper_kebab_case, to_title_case → string (the Rust heck crate's word rules).
/// - soundex → string; ascii → int32 (signed first byte); translate (s, from, to) → string;
///   split_part (s, delimiter, part), substring_index (s, delimiter, count) → string.
arrow::Status RegisterStringFunctions();

}  // namespace ketch::str
