// Tests for quiver/base/bit_util.h and checked_math.h at the edges of
// int64_t: lengths from input reach these helpers (issue 10 item 5).
#include "quiver/base/bit_util.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "quiver/base/checked_math.h"

namespace quiver {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Evaluated at compile time: signed overflow in a constant expression is a
// compile error, so the old (num_bits + 7) / 8 fails to build here.
static_assert(bit_util::BytesForBits(kMax) == (kMax / 8) + 1);
static_assert(bit_util::BytesForBits(kMax - 6) == (kMax / 8) + 1);
static_assert(bit_util::BytesForBits(0) == 0);

TEST(BitUtilTest, BytesForBitsIsExactUpToInt64Max) {
  EXPECT_EQ(bit_util::BytesForBits(0), 0);
  EXPECT_EQ(bit_util::BytesForBits(1), 1);
  EXPECT_EQ(bit_util::BytesForBits(7), 1);
  EXPECT_EQ(bit_util::BytesForBits(8), 1);
  EXPECT_EQ(bit_util::BytesForBits(9), 2);
  // Run-time values too (the validation path computes them from input).
  volatile int64_t n = kMax;
  EXPECT_EQ(bit_util::BytesForBits(n), int64_t{1152921504606846976});
  n = kMax - 7;
  EXPECT_EQ(bit_util::BytesForBits(n), int64_t{1152921504606846975});
}

TEST(CheckedMathTest, ReportsOverflowAtTheEdges) {
  int64_t out = 0;
  EXPECT_FALSE(CheckedAdd<int64_t>(kMax, 1, &out));
  EXPECT_TRUE(CheckedAdd<int64_t>(kMax - 1, 1, &out));
  EXPECT_EQ(out, kMax);
  EXPECT_FALSE(CheckedMul<int64_t>(kMax, 2, &out));
  EXPECT_FALSE(CheckedRoundUp(kMax, 8, &out));
  EXPECT_TRUE(CheckedRoundUp(kMax - 7, 8, &out));
  EXPECT_EQ(out, kMax - 7);
  EXPECT_FALSE(RangeInBounds(kMax, 1, kMax));
  EXPECT_TRUE(RangeInBounds(kMax - 1, 1, kMax));
}

TEST(BitUtilTest, GetSetClearBits) {
  uint8_t bits[2] = {0, 0};
  bit_util::SetBit(bits, 0);
  bit_util::SetBit(bits, 9);
  EXPECT_EQ(bits[0], 0x01);  // LSB first
  EXPECT_EQ(bits[1], 0x02);
  EXPECT_TRUE(bit_util::GetBit(bits, 9));
  EXPECT_FALSE(bit_util::GetBit(bits, 8));
  bit_util::ClearBit(bits, 0);
  EXPECT_EQ(bits[0], 0x00);
  bit_util::SetBitTo(bits, 7, true);
  bit_util::SetBitTo(bits, 9, false);
  EXPECT_EQ(bits[0], 0x80);
  EXPECT_EQ(bits[1], 0x00);
}

TEST(BitUtilTest, CountSetBitsAtAnyOffset) {
  // 200 bits, every third set: ranges cross byte and 64-bit word boundaries.
  uint8_t bits[25] = {};
  for (int64_t i = 0; i < 200; i += 3) bit_util::SetBit(bits, i);
  for (int64_t offset : {0, 1, 7, 8, 13, 64, 65}) {
    for (int64_t length : {0, 1, 9, 63, 64, 65, 130}) {
      if (offset + length > 200) continue;
      int64_t want = 0;
      for (int64_t i = offset; i < offset + length; ++i) want += (i % 3 == 0);
      EXPECT_EQ(bit_util::CountSetBits(bits, offset, length), want) << offset << "+" << length;
    }
  }
}

TEST(BitUtilTest, CopyBitmapAlignedAndUnaligned) {
  uint8_t src[8] = {0xA5, 0x3C, 0xFF, 0x00, 0x81, 0x7E, 0x12, 0x34};
  for (int64_t src_offset : {0, 3, 8}) {
    for (int64_t dst_offset : {0, 5, 16}) {
      for (int64_t length : {0, 7, 8, 21}) {
        uint8_t dst[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
        bit_util::CopyBitmap(src, src_offset, length, dst, dst_offset);
        for (int64_t i = 0; i < length; ++i) {
          EXPECT_EQ(bit_util::GetBit(dst, dst_offset + i), bit_util::GetBit(src, src_offset + i))
              << src_offset << "->" << dst_offset << " bit " << i;
        }
        // Bits around the copied range are untouched.
        if (dst_offset > 0) {
          EXPECT_TRUE(bit_util::GetBit(dst, dst_offset - 1));
        }
        EXPECT_TRUE(bit_util::GetBit(dst, dst_offset + length));
      }
    }
  }
}

TEST(BitUtilTest, LoadStoreLittleEndianUnaligned) {
  uint8_t bytes[9] = {};
  bit_util::StoreLE<uint32_t>(bytes + 1, 0x04030201u);
  EXPECT_EQ(bytes[1], 0x01);
  EXPECT_EQ(bytes[4], 0x04);
  EXPECT_EQ(bit_util::LoadLE<uint32_t>(bytes + 1), 0x04030201u);
  bit_util::StoreLE<int64_t>(bytes + 1, -2);
  EXPECT_EQ(bit_util::LoadLE<int64_t>(bytes + 1), -2);
}

TEST(BitUtilTest, ByteSwapElements) {
  uint8_t two[4] = {1, 2, 3, 4};
  bit_util::ByteSwapElements(two, 2, 2);
  EXPECT_EQ(two[0], 2);
  EXPECT_EQ(two[1], 1);
  EXPECT_EQ(two[2], 4);
  EXPECT_EQ(two[3], 3);
  uint8_t eight[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  bit_util::ByteSwapElements(eight, 1, 8);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(eight[i], 8 - i);
  uint8_t untouched[4] = {1, 2, 3, 4};
  bit_util::ByteSwapElements(untouched, 0, 4);
  EXPECT_EQ(untouched[0], 1);
}

}  // namespace
}  // namespace quiver
