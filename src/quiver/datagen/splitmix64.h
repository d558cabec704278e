// quiver/datagen/splitmix64.h — the splitmix64 mixing function (Steele, Lea,
// Flood 2014), the one source of deterministic pseudo-random values for the
// generators (batch_generator.cc, tpch.cc) and the benchmarks' key
// generators (quiver/bench).
//
// Thread safety: pure constexpr functions.
#pragma once

#include <cstdint>

namespace quiver::datagen {

/// The splitmix64 increment (the golden ratio in 64-bit fixed point).
inline constexpr uint64_t kSplitMix64Golden = 0x9E3779B97F4A7C15ULL;

/// The splitmix64 finalizer: a bijection of 64-bit values whose output bits
/// each depend on every input bit.
constexpr uint64_t SplitMix64Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// One splitmix64 draw from state `x`: SplitMix64Mix(x + golden), i.e. the
/// value a generator seeded with `x` returns first. A pure function of x.
constexpr uint64_t SplitMix64(uint64_t x) { return SplitMix64Mix(x + kSplitMix64Golden); }

}  // namespace quiver::datagen
