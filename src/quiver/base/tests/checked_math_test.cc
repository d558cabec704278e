// Tests for quiver/base/checked_math.h away from the int64_t edges (the
// edges are in bit_util_test.cc): every operation, negative values, the
// rounding helpers and RangeInBounds' rejections.
#include "quiver/base/checked_math.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace quiver {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

TEST(CheckedMathTest, AddSubMulOnInRangeValues) {
  int64_t out = 0;
  ASSERT_TRUE(CheckedAdd<int64_t>(40, 2, &out));
  EXPECT_EQ(out, 42);
  ASSERT_TRUE(CheckedSub<int64_t>(40, 50, &out));
  EXPECT_EQ(out, -10);
  ASSERT_TRUE(CheckedMul<int64_t>(-6, 7, &out));
  EXPECT_EQ(out, -42);
}

TEST(CheckedMathTest, SignedEdges) {
  int64_t out = 0;
  EXPECT_FALSE(CheckedSub<int64_t>(kMin, 1, &out));
  EXPECT_FALSE(CheckedAdd<int64_t>(kMin, -1, &out));
  EXPECT_FALSE(CheckedMul<int64_t>(kMin, -1, &out));
  EXPECT_FALSE(CheckedSub<int64_t>(0, kMin, &out));
  ASSERT_TRUE(CheckedSub<int64_t>(-1, kInt64Max, &out));
  EXPECT_EQ(out, kMin);
}

TEST(CheckedMathTest, NarrowAndUnsignedTypes) {
  int32_t o32 = 0;
  EXPECT_FALSE(CheckedAdd<int32_t>(std::numeric_limits<int32_t>::max(), 1, &o32));
  EXPECT_FALSE(CheckedMul<int32_t>(1 << 16, 1 << 15, &o32));
  ASSERT_TRUE(CheckedMul<int32_t>(1 << 15, 1 << 15, &o32));
  EXPECT_EQ(o32, 1 << 30);
  uint64_t u = 0;
  EXPECT_FALSE(CheckedSub<uint64_t>(0, 1, &u));
  EXPECT_FALSE(CheckedAdd<uint64_t>(std::numeric_limits<uint64_t>::max(), 1, &u));
}

TEST(CheckedMathTest, RoundUp) {
  int64_t out = -1;
  ASSERT_TRUE(CheckedRoundUp(0, 8, &out));
  EXPECT_EQ(out, 0);
  ASSERT_TRUE(CheckedRoundUp(1, 8, &out));
  EXPECT_EQ(out, 8);
  ASSERT_TRUE(CheckedRoundUp(64, 64, &out));
  EXPECT_EQ(out, 64);
  ASSERT_TRUE(CheckedRoundUp(65, 64, &out));
  EXPECT_EQ(out, 128);
  EXPECT_FALSE(CheckedRoundUp(-1, 8, &out));
  static_assert(RoundUpTo8(0) == 0 && RoundUpTo8(1) == 8 && RoundUpTo8(8) == 8 && RoundUpTo8(9) == 16);
  static_assert(RoundUpTo64(1) == 64 && RoundUpTo64(64) == 64 && RoundUpTo64(65) == 128);
}

TEST(CheckedMathTest, RangeInBounds) {
  EXPECT_TRUE(RangeInBounds(0, 0, 0));
  EXPECT_TRUE(RangeInBounds(0, 10, 10));
  EXPECT_TRUE(RangeInBounds(10, 0, 10));  // empty range at the end
  EXPECT_FALSE(RangeInBounds(10, 1, 10));
  EXPECT_FALSE(RangeInBounds(5, 6, 10));
  EXPECT_FALSE(RangeInBounds(-1, 1, 10));
  EXPECT_FALSE(RangeInBounds(0, -1, 10));
  EXPECT_FALSE(RangeInBounds(0, 0, -1));
}

}  // namespace
}  // namespace quiver
