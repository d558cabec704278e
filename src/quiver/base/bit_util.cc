#include "quiver/base/bit_util.h"

#include <algorithm>
#include <utility>

namespace quiver::bit_util {

int64_t CountSetBits(const uint8_t* bits, int64_t offset, int64_t length) {
  int64_t count = 0;
  int64_t i = offset;
  const int64_t end = offset + length;
  // Leading bits up to a byte boundary.
  while (i < end && (i & 7) != 0) count += GetBit(bits, i++);
  // Whole 64-bit words.
  while (end - i >= 64) {
    uint64_t w;
    std::memcpy(&w, bits + (i >> 3), 8);
    count += std::popcount(w);
    i += 64;
  }
  while (end - i >= 8) {
    count += std::popcount(static_cast<unsigned>(bits[i >> 3]));
    i += 8;
  }
  while (i < end) count += GetBit(bits, i++);
  return count;
}

void CopyBitmap(const uint8_t* src, int64_t src_offset, int64_t length, uint8_t* dst, int64_t dst_offset) {
  if ((src_offset & 7) == 0 && (dst_offset & 7) == 0) {
    const int64_t whole = length / 8;
    std::memcpy(dst + dst_offset / 8, src + src_offset / 8, static_cast<size_t>(whole));
    for (int64_t i = whole * 8; i < length; ++i) {
      SetBitTo(dst, dst_offset + i, GetBit(src, src_offset + i));
    }
    return;
  }
  for (int64_t i = 0; i < length; ++i) {
    SetBitTo(dst, dst_offset + i, GetBit(src, src_offset + i));
  }
}

void ByteSwapElements(uint8_t* data, int64_t num_elements, int width) {
  for (int64_t e = 0; e < num_elements; ++e) {
    std::reverse(data + e * width, data + (e + 1) * width);
  }
}

}  // namespace quiver::bit_util
