// quiver/base/checked_math.h — overflow-checked integer arithmetic for sizes
// and offsets that come from untrusted input.
//
// Every function returns false on overflow and leaves *out unspecified.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <limits>

namespace quiver {

template <typename T>
[[nodiscard]] inline bool CheckedAdd(T a, T b, T* out) {
  return !__builtin_add_overflow(a, b, out);
}
template <typename T>
[[nodiscard]] inline bool CheckedSub(T a, T b, T* out) {
  return !__builtin_sub_overflow(a, b, out);
}
template <typename T>
[[nodiscard]] inline bool CheckedMul(T a, T b, T* out) {
  return !__builtin_mul_overflow(a, b, out);
}

/// Rounds `n` up to a multiple of `multiple` (a power of two); false on overflow
/// or negative n.
[[nodiscard]] inline bool CheckedRoundUp(int64_t n, int64_t multiple, int64_t* out) {
  if (n < 0) return false;
  int64_t t;
  if (!CheckedAdd<int64_t>(n, multiple - 1, &t)) return false;
  *out = t & ~(multiple - 1);
  return true;
}

/// Rounds up to a multiple of 8 (the Arrow IPC body alignment) without
/// overflow checks: callers pass values already bounded by buffer sizes.
constexpr int64_t RoundUpTo8(int64_t n) { return (n + 7) & ~int64_t{7}; }
constexpr int64_t RoundUpTo64(int64_t n) { return (n + 63) & ~int64_t{63}; }

/// True when [offset, offset + length) lies inside [0, size), all non-negative
/// and without overflow.
[[nodiscard]] inline bool RangeInBounds(int64_t offset, int64_t length, int64_t size) {
  if (offset < 0 || length < 0 || size < 0) return false;
  int64_t end;
  if (!CheckedAdd(offset, length, &end)) return false;
  return end <= size;
}

}  // namespace quiver
