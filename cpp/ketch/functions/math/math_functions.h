#pragma once

#include <arrow/status.h>

namespace ketch::math {

/// Registers the numeric and general functions Arrow's plain fallback cannot express:
/// - round (decimals) → input type: half away from zero (as Daft / Rust's f64::round).
/// - clip_lower (x, lo), clip_upper (x, hi) → common type; null when x is null.
/// - modulo (a, b) → common numeric type: the truncated remainder (sign of `a`, as Daft/Rust `%`;
///   floats by fmod); floor_divide (a, b): the quotient rounded towards -inf (Python's `//`).
///   Integer division by zero and results the type cannot hold are Invalid errors naming the row.
/// - add_checked / and_kleene / or_kleene / xor / invert keep Arrow's meaning, and also take
///   strings (add_checked concatenates, null if either side is null) and integers (bitwise).
/// - try_cast (x; dtype: a null scalar of the target type) → the target type, null where a value
///   does not convert (plan-time TypeError when the types never convert).
/// - list_getitem (x; index, negative from the end) → element type, null when out of range.
/// - hash (x; seed) → uint64: XXH64 of each value's bytes (strings/binary: their bytes; numbers
///   and booleans: their little-endian fixed-width bytes; null → null).
/// - minhash (text; num_hashes, ngram_size, seed = 1, hash_function = "murmurhash3" | "xxhash")
///   → fixed_size_list<uint32>[num_hashes]: MinHash signatures of each string's word n-grams
///   (the algorithm is spelled out in minhash_function.cc; values differ from Daft's, whose
///   permutations come from another generator).
arrow::Status RegisterMathFunctions();

}  // namespace ketch::math
