// quiver/sql/execution/aggregate_statistics.h — the variance family's
// per-group arithmetic (var_samp, var_pop, stddev_samp, stddev_pop): a
// running mean and sum of squared deviations updated one value at a time
// (Welford, 1962), two partial states combined by Chan, Golub and LeVeque's
// pairwise formula (1979) when workers' tables or spilled states merge.
// Both in the order of operations DuckDB's STDDEV / VARIANCE states use,
// so a single-threaded answer equals DuckDB's to the last bit. Internal to
// sql/execution; pure functions, thread-compatible.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "quiver/sql/plan/logical_plan.h"

namespace quiver::sql {

/// Folds value `x` into (count, mean, m2): count + 1 values, their mean and
/// the sum of their squared deviations from it.
inline void WelfordAdd(double x, int64_t* count, double* mean, double* m2) {
  ++*count;
  const double delta = x - *mean;
  const double new_mean = *mean + delta / static_cast<double>(*count);
  *m2 += (x - new_mean) * delta;
  *mean = new_mean;
}

/// Combines partial state (ocount, omean, om2) into (count, mean, m2)
/// (Chan et al.'s pairwise update; either side may be empty).
inline void ChanMerge(int64_t ocount, double omean, double om2, int64_t* count, double* mean, double* m2) {
  if (ocount == 0) return;
  if (*count == 0) {
    *count = ocount;
    *mean = omean;
    *m2 = om2;
    return;
  }
  const auto n = static_cast<double>(*count + ocount);
  const auto nt = static_cast<double>(*count), no = static_cast<double>(ocount);
  const double merged_mean = (no * omean + nt * *mean) / n;
  const double delta = omean - *mean;
  *m2 = om2 + *m2 + delta * delta * no * nt / n;
  *mean = merged_mean;
  *count += ocount;
}

/// Whether `fn` is one of the variance family.
inline bool IsVarianceFn(AggFn fn) {
  return fn == AggFn::kVarSamp || fn == AggFn::kVarPop || fn == AggFn::kStddevSamp || fn == AggFn::kStddevPop;
}

/// The result of variance-family `fn` over `count` values whose squared
/// deviations sum to `m2`; false for NULL (no value; one value for the
/// sample forms, as Spark and DuckDB). A negative m2 from rounding is 0.
inline bool VarianceResult(AggFn fn, int64_t count, double m2, double* out) {
  const bool sample = fn == AggFn::kVarSamp || fn == AggFn::kStddevSamp;
  if (count == 0 || (sample && count == 1)) return false;
  const double var = std::max(0.0, m2) / static_cast<double>(sample ? count - 1 : count);
  *out = fn == AggFn::kStddevSamp || fn == AggFn::kStddevPop ? std::sqrt(var) : var;
  return true;
}

}  // namespace quiver::sql
