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

}  // namespace
}  // namespace quiver
