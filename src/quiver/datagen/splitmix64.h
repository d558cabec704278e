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

/// A splitmix64 stream from a start state: Next() adds the golden increment
/// and mixes. The generators derive their start states from (seed, stream,
/// row) so that every value is a pure function of them. Not thread-safe
/// (one stream per thread); copyable.
class SplitMix64Stream {
 public:
  explicit constexpr SplitMix64Stream(uint64_t state) : state_(state) {}

  constexpr uint64_t Next() {
    state_ += kSplitMix64Golden;
    return SplitMix64Mix(state_);
  }

  /// Uniform in [lo, hi] (lo <= hi) from one draw, by multiply-shift: the
  /// bias (below 2^-40 for ranges under 2^24) keeps the draw count fixed.
  constexpr int64_t Uniform(int64_t lo, int64_t hi) {
    const auto range = static_cast<unsigned __int128>(static_cast<uint64_t>(hi - lo) + 1);
    return lo + static_cast<int64_t>((static_cast<unsigned __int128>(Next()) * range) >> 64);
  }

 private:
  uint64_t state_;
};

}  // namespace quiver::datagen
