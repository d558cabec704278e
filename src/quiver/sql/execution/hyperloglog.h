// quiver/sql/execution/hyperloglog.h — HyperLogLog sketches of
// approx_count_distinct (Flajolet, Fusy, Gandouet, Meunier 2007): 2^p
// one-byte registers, each the largest rank (leading zeros + 1) of the
// 64-bit hashes whose top p bits name it; merged by taking the larger
// register; estimated with Ertl's improved estimator ("New cardinality
// estimation algorithms for HyperLogLog sketches", 2017), which needs no
// empirical bias tables and is unbiased from 0 to past 2^64 / 1000. The
// relative standard error is about 1.04 / sqrt(2^p); p comes from the
// requested relative error as Spark's HyperLogLogPlusPlus derives it
// (0.05, Spark's default: p = 9, 512 registers, 4.6%). Values are hashed
// with XXH3 (Debian's libxxhash). Pure functions; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>

#include "quiver/base/result.h"

namespace quiver::sql::hll {

/// Fewest and most index bits.
inline constexpr int kMinPrecision = 4, kMaxPrecision = 16;

/// The index bits for relative standard error `relative_sd` (Spark's
/// ceil(2 log2(1.106 / rsd))). Errors: Invalid when that is below 4 (an
/// error above 39%) or above 16 (below 0.44%), or rsd is not positive.
Result<int> PrecisionFor(double relative_sd);

/// The 64-bit hash of a value's bytes (XXH3, seed 0).
uint64_t Hash(const void* data, size_t len);

/// Folds `hash` into the 2^p `registers`.
inline void Add(uint8_t* registers, int p, uint64_t hash) {
  const uint64_t index = hash >> (64 - p);
  // A guard bit below the p shifted-out bits bounds the rank at 64 - p + 1.
  const uint64_t w = (hash << p) | (uint64_t{1} << (p - 1));
  const auto rank = static_cast<uint8_t>(__builtin_clzll(w) + 1);
  if (rank > registers[index]) registers[index] = rank;
}

/// `into` = the register-wise maximum of `into` and `from` (2^p each).
void Merge(uint8_t* into, const uint8_t* from, int p);

/// The estimated number of distinct hashes folded into the 2^p registers
/// (0 for none).
int64_t Estimate(const uint8_t* registers, int p);

}  // namespace quiver::sql::hll
