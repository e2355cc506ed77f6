#pragma once

// The hash functions behind `hash`, `minhash` and `simhash`, with Daft 0.7.26's byte rules
// (daft-core kernels/hashing.rs) so the values match Daft's.

#include <arrow/api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace ketch::math {

/// The hash functions Daft names: "xxhash" (= "xxhash3_64"), "xxhash64", "xxhash32",
/// "murmurhash3", "sha1".
enum class HashKind { kXxh3_64, kXxh64, kXxh32, kMurmur3, kSha1 };

/// Parses a Daft hash_function name (case-insensitive); Invalid names the function and the name.
arrow::Result<HashKind> ParseHashKind(std::string_view name, std::string_view function);

/// One value's hash, as a uint64:
/// - kXxh3_64: XXH3_64bits_withSeed(bytes, seed), seed 0 when unseeded (== XXH3_64bits);
/// - kXxh64: XXH64(bytes, seed or 0); kXxh32: XXH32(bytes, low 32 bits of seed or 0);
/// - kMurmur3: MurmurHash3_x86_32(bytes, low 32 bits of seed, or 42 when unseeded: Daft's default);
/// - kSha1: the first 8 bytes, little-endian, of SHA-1(seed as 8 little-endian bytes ++ bytes),
///   without the prefix when unseeded.
/// xxHash from libxxhash (Debian libxxhash-dev), SHA-1 from OpenSSL's libcrypto.
uint64_t HashBytes(HashKind kind, const uint8_t* data, size_t len, bool seeded, uint64_t seed);

/// MurmurHash3_x86_32 (github.com/aappleby/smhasher, MurmurHash3.cpp) of `len` bytes with `seed`.
uint32_t Murmur3_32(const uint8_t* data, size_t len, uint32_t seed);

/// Daft's `hash` of every element of `values`: UInt64, `values.length()` long. `seeds` (may be
/// null: unseeded) holds one seed per element. Nulls hash too (strings and binaries as "",
/// fixed-size binaries as zero bytes, the other scalars as Daft's constant null hash); list and
/// struct rows that are null stay null. TypeError for types Daft cannot hash (maps, unions).
arrow::Result<std::shared_ptr<arrow::UInt64Array>> HashArray(const arrow::Array& values,
                                                             const uint64_t* seeds, HashKind kind);

}  // namespace ketch::math
