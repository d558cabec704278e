// quiver/sql/execution/hyperloglog.cc — see hyperloglog.h.
#include "quiver/sql/execution/hyperloglog.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace quiver::sql::hll {

Result<int> PrecisionFor(double relative_sd) {
  if (!(relative_sd > 0)) return Status::Invalid("relative error " + std::to_string(relative_sd) + " is not positive");
  const double p = std::ceil(2.0 * std::log2(1.106 / relative_sd));
  if (p < kMinPrecision)
    return Status::Invalid("relative error " + std::to_string(relative_sd) +
                           " is too large: HyperLogLog needs at least 4 index bits (an error of at most 0.39)");
  if (p > kMaxPrecision)
    return Status::Invalid("relative error " + std::to_string(relative_sd) +
                           " is too small: at most 16 index bits here (an error of at least 0.0044)");
  return static_cast<int>(p);
}

uint64_t Hash(const void* data, size_t len) { return XXH3_64bits(data, len); }

void Merge(uint8_t* into, const uint8_t* from, int p) {
  const size_t m = size_t{1} << p;
  for (size_t i = 0; i < m; ++i) into[i] = std::max(into[i], from[i]);
}

namespace {

// Ertl 2017, Algorithm 6's sigma and tau.
double Sigma(double x) {
  if (x == 1) return std::numeric_limits<double>::infinity();
  double y = 1, z = x, z_old;
  do {
    x *= x;
    z_old = z;
    z += x * y;
    y += y;
  } while (z != z_old);
  return z;
}

double Tau(double x) {
  if (x == 0 || x == 1) return 0;
  double y = 1, z = 1 - x, z_old;
  do {
    x = std::sqrt(x);
    z_old = z;
    y *= 0.5;
    z -= (1 - x) * (1 - x) * y;
  } while (z != z_old);
  return z / 3;
}

}  // namespace

int64_t Estimate(const uint8_t* registers, int p) {
  const int q = 64 - p;
  const size_t m = size_t{1} << p;
  int64_t counts[66] = {};
  for (size_t i = 0; i < m; ++i) ++counts[std::min<int>(registers[i], q + 1)];
  const auto md = static_cast<double>(m);
  double z = md * Tau((md - static_cast<double>(counts[q + 1])) / md);
  for (int k = q; k >= 1; --k) z = 0.5 * (z + static_cast<double>(counts[k]));
  z += md * Sigma(static_cast<double>(counts[0]) / md);
  constexpr double kAlphaInf = 0.72134752044448170368;  // 1 / (2 ln 2)
  return std::llround(kAlphaInf * md * md / z);
}

}  // namespace quiver::sql::hll
