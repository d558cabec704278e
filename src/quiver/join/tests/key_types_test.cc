// Direct tests for quiver/join/key_types.h KeyEncoder (with ResolveKeyPair,
// which makes its specs): equal keys encode to equal bytes across the type
// pairs the join accepts, different keys to different bytes, sizes as
// documented.
#include "quiver/join/key_types.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "quiver/memory/memory_pool.h"
#include "quiver/testing/array_builders.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::join {
namespace {

using ::quiver::testing::Int32Array;
using ::quiver::testing::Int64Array;
using ::quiver::testing::PrimitiveArray;
using ::quiver::testing::StringArray;

class KeyEncoderTest : public ::testing::Test {
 protected:
  MemoryPool* pool() { return pool_.get(); }

  /// The encoding of row `i` of `columns` (EncodedSize(i) bytes).
  static std::string Encode(const KeyEncoder& enc, const std::vector<ArrayDataPtr>& columns, int64_t i) {
    std::vector<const ArrayData*> raw;
    for (const auto& c : columns) raw.push_back(c.get());
    std::string out(static_cast<size_t>(enc.EncodedSize(raw, i)), '\0');
    enc.Encode(raw, i, reinterpret_cast<uint8_t*>(out.data()));
    return out;
  }

  static ArrayDataPtr Sliced(const ArrayDataPtr& a, int64_t offset, int64_t length) {
    auto s = SliceArray(a, offset, length);
    EXPECT_OK(s);
    return *s;
  }

  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot({"key-encoder-test"});
};

TEST_F(KeyEncoderTest, IntegersOfDifferentWidthsEncodeByValue) {
  ASSERT_OK_AND_ASSIGN(KeyColumnSpec spec, ResolveKeyPair(*int32(), "a", *int64(), "b"));
  EXPECT_EQ(spec.key_class, KeyClass::kInt64);
  KeyEncoder enc({spec});
  EXPECT_TRUE(enc.fixed_width());
  EXPECT_EQ(enc.fixed_bytes(), 8);
  auto build = Int32Array(pool(), {5, -7, 1 << 30});
  auto probe = Sliced(Int64Array(pool(), {0, -7, 5, int64_t{1} << 30}), 1, 3);
  EXPECT_EQ(Encode(enc, {build}, 0), Encode(enc, {probe}, 1));  // 5
  EXPECT_EQ(Encode(enc, {build}, 1), Encode(enc, {probe}, 0));  // -7
  EXPECT_EQ(Encode(enc, {build}, 2), Encode(enc, {probe}, 2));  // 2^30
  EXPECT_NE(Encode(enc, {build}, 0), Encode(enc, {build}, 1));
}

TEST_F(KeyEncoderTest, Utf8AndLargeUtf8EncodeTheSameBytes) {
  ASSERT_OK_AND_ASSIGN(KeyColumnSpec spec, ResolveKeyPair(*utf8(), "s", *large_utf8(), "t"));
  EXPECT_EQ(spec.key_class, KeyClass::kVarBytes);
  KeyEncoder enc({spec});
  EXPECT_FALSE(enc.fixed_width());
  auto small = StringArray(pool(), {"", "alpha"});
  auto large = Sliced(StringArray<int64_t>(pool(), {"skip", "alpha", ""}), 1, 2);
  EXPECT_EQ(Encode(enc, {small}, 1), Encode(enc, {large}, 0));
  EXPECT_EQ(Encode(enc, {small}, 0), Encode(enc, {large}, 1));
  // A 4-byte length prefix, then the bytes.
  std::vector<const ArrayData*> raw{small.get()};
  EXPECT_EQ(enc.EncodedSize(raw, 0), 4);
  EXPECT_EQ(enc.EncodedSize(raw, 1), 4 + 5);
}

TEST_F(KeyEncoderTest, LengthPrefixesKeepMultiColumnKeysApart) {
  ASSERT_OK_AND_ASSIGN(KeyColumnSpec s, ResolveKeyPair(*utf8(), "x", *utf8(), "x"));
  ASSERT_OK_AND_ASSIGN(KeyColumnSpec i, ResolveKeyPair(*int64(), "n", *int64(), "n"));
  KeyEncoder enc({s, s, i});
  EXPECT_EQ(enc.fixed_bytes(), s.width + s.width + i.width);
  auto first = StringArray(pool(), {"ab", "a", "ab"});
  auto second = StringArray(pool(), {"c", "bc", "c"});
  auto num = Int64Array(pool(), {1, 1, 2});
  const std::string k0 = Encode(enc, {first, second, num}, 0);  // ("ab","c",1)
  const std::string k1 = Encode(enc, {first, second, num}, 1);  // ("a","bc",1)
  const std::string k2 = Encode(enc, {first, second, num}, 2);  // ("ab","c",2)
  EXPECT_NE(k0, k1);
  EXPECT_NE(k0, k2);
  EXPECT_EQ(k0.size(), k1.size());
}

TEST_F(KeyEncoderTest, FloatsNormalizeZeroAndNaN) {
  ASSERT_OK_AND_ASSIGN(KeyColumnSpec spec, ResolveKeyPair(*float64(), "f", *float64(), "g"));
  EXPECT_EQ(spec.key_class, KeyClass::kFloat64);
  KeyEncoder enc({spec});
  const double nan_a = std::numeric_limits<double>::quiet_NaN();
  const double nan_b = -std::nan("7");
  auto a = PrimitiveArray<double>(pool(), float64(), {0.0, nan_a, 1.5});
  auto b = PrimitiveArray<double>(pool(), float64(), {-0.0, nan_b, -1.5});
  EXPECT_EQ(Encode(enc, {a}, 0), Encode(enc, {b}, 0));  // -0.0 == 0.0
  EXPECT_EQ(Encode(enc, {a}, 1), Encode(enc, {b}, 1));  // NaN == NaN
  EXPECT_NE(Encode(enc, {a}, 2), Encode(enc, {b}, 2));
}

TEST_F(KeyEncoderTest, IncomparablePairsNameBothColumns) {
  ASSERT_RAISES_WITH_MESSAGE(Invalid, "key columns 'a' (utf8) and 'b' (int64) cannot be compared",
                             ResolveKeyPair(*utf8(), "a", *int64(), "b"));
}

}  // namespace
}  // namespace quiver::join
