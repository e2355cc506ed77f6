#pragma once

#include <cstddef>
#include <cstdint>

namespace ketch::math {

/// XXH64 (github.com/Cyan4973/xxHash, doc/xxhash_spec.md) of `len` bytes with `seed`.
uint64_t Xxh64(const uint8_t* data, size_t len, uint64_t seed);

/// MurmurHash3_x86_32 (github.com/aappleby/smhasher) of `len` bytes with `seed`.
uint32_t Murmur3_32(const uint8_t* data, size_t len, uint32_t seed);

}  // namespace ketch::math
