#pragma once

#include <arrow/status.h>

namespace ketch::str {

/// Registers Daft's string functions (all take a string / large_string first argument, checked at
/// plan time; a literal regex is compiled at plan time and a bad one names the pattern):
/// - utf8_contains / starts_with / ends_with (pattern) → bool; like / ilike (pattern: SQL `%` and
///   `_`) → bool.
/// - replace (pattern, replacement) → string.
/// - split (pattern), regexp_split (pattern) → list<string>.
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
/// Ketch's own RE2 kernels (string_regex.cc; options `pattern` in RE2 syntax and `ignore_case`;
/// each also takes its pattern, and regexp_replace its replacement, per row through
/// per_row_option in one pass):
/// - regexp_match → bool: matches anywhere. regexp_count → uint64: non-overlapping matches.
/// - regexp_replace (replacement: RE2 `\0`-`\9` groups, `\\` a backslash; max_replacements,
///   default -1: all) → string.
/// - regexp_extract (index) → string: group `index` (0: the whole match) of the first match, null
///   when nothing matches, "" when the group took no part; regexp_extract_all (index) →
///   list<large_string>: that group of every match.
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
