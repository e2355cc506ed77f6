#pragma once

// SplitMix64 (Steele, Lea & Flood, "Fast Splittable Pseudorandom Number Generators", OOPSLA 2014;
// constants from Vigna's splitmix64.c, prng.di.unimi.it): a cheap, well-mixed 64-bit bijection.

#include <cstdint>

namespace ketch {

/// SplitMix64's finalizer (MurmurHash3's fmix64 with Stafford's "Mix13" constants): a bijection of
/// 64-bit values whose output bits each depend on every input bit. Mix64(0) == 0.
constexpr uint64_t Mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// One SplitMix64 step from state `x`: Mix64(x + the golden-ratio increment 0x9e3779b97f4a7c15).
constexpr uint64_t SplitMix64(uint64_t x) { return Mix64(x + 0x9e3779b97f4a7c15ULL); }

}  // namespace ketch
