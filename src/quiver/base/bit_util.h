// quiver/base/bit_util.h — bitmaps (LSB-first, as the Arrow columnar format's
// validity bitmaps) and byte-order helpers.
//
// Thread safety: pure functions over caller-owned memory.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace quiver::bit_util {

inline bool GetBit(const uint8_t* bits, int64_t i) { return (bits[i >> 3] >> (i & 7)) & 1; }
inline void SetBit(uint8_t* bits, int64_t i) { bits[i >> 3] |= uint8_t(1u << (i & 7)); }
inline void ClearBit(uint8_t* bits, int64_t i) { bits[i >> 3] &= uint8_t(~(1u << (i & 7))); }
inline void SetBitTo(uint8_t* bits, int64_t i, bool v) { v ? SetBit(bits, i) : ClearBit(bits, i); }

/// Bytes needed for `num_bits` bits (num_bits >= 0), i.e. ceil(num_bits / 8).
/// Defined for every non-negative int64_t, INT64_MAX included: it never
/// forms num_bits + 7 (lengths from input reach it; issue 10 item 5).
constexpr int64_t BytesForBits(int64_t num_bits) { return num_bits / 8 + ((num_bits & 7) != 0); }

/// Number of set bits in bits[offset, offset + length). Preconditions:
/// offset >= 0, length >= 0, offset + length representable (callers pass a
/// range already checked against the bitmap's size, e.g. by validation).
int64_t CountSetBits(const uint8_t* bits, int64_t offset, int64_t length);

/// Copies bits src[src_offset, +length) to dst[dst_offset, +length).
void CopyBitmap(const uint8_t* src, int64_t src_offset, int64_t length, uint8_t* dst, int64_t dst_offset);

inline constexpr bool kLittleEndian = std::endian::native == std::endian::little;
static_assert(kLittleEndian, "quiver supports little-endian hosts only");

/// Loads a little-endian value from unaligned memory.
template <typename T>
inline T LoadLE(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

/// Stores a little-endian value to unaligned memory.
template <typename T>
inline void StoreLE(void* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

/// Reverses the bytes of each `width`-byte element in place (width 2, 4, 8,
/// 16 or 32); used to swap big-endian IPC bodies to native order.
void ByteSwapElements(uint8_t* data, int64_t num_elements, int width);

}  // namespace quiver::bit_util
