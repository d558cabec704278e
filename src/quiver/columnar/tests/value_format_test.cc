// Tests for quiver/columnar/value_format.h: text and JSON forms of each
// type family, escaping, and the float16 helpers.
#include "quiver/columnar/value_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "quiver/testing/array_builders.h"
#include "quiver/testing/array_readers.h"

namespace quiver {
namespace {

using testing::BufferOf;
using testing::BytesOf;
using testing::Int32Array;
using testing::ListArray;
using testing::MakeArray;
using testing::PrimitiveArray;
using testing::StringArray;

class ValueFormatTest : public ::testing::Test {
 protected:
  MemoryPool* pool() { return pool_.get(); }
  static std::string Text(const ArrayDataPtr& a, int64_t row) {
    return FormatValueToString(*a, row, ValueFormat::kText);
  }
  static std::string Json(const ArrayDataPtr& a, int64_t row) {
    return FormatValueToString(*a, row, ValueFormat::kJson);
  }
  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

TEST_F(ValueFormatTest, IntegersBoolsAndNull) {
  auto a = PrimitiveArray<int64_t>(pool(), int64(), {std::numeric_limits<int64_t>::min(), std::nullopt, 42});
  EXPECT_EQ(Text(a, 0), "-9223372036854775808");
  EXPECT_EQ(Json(a, 0), "-9223372036854775808");
  EXPECT_EQ(Text(a, 1), "null");
  EXPECT_EQ(Json(a, 1), "null");
  auto u = PrimitiveArray<uint64_t>(pool(), uint64(), {std::numeric_limits<uint64_t>::max()});
  EXPECT_EQ(Json(u, 0), "18446744073709551615");
  auto b = testing::BoolArray(pool(), {true, false});
  EXPECT_EQ(Text(b, 0), "true");
  EXPECT_EQ(Json(b, 1), "false");
  auto n = MakeArray(null(), 2, {}, {}, 2);
  EXPECT_EQ(Text(n, 1), "null");
}

TEST_F(ValueFormatTest, Floats) {
  auto d = PrimitiveArray<double>(
      pool(), float64(),
      {1.5, std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity(), 0.1});
  EXPECT_EQ(Text(d, 0), "1.5");
  EXPECT_EQ(Text(d, 1), "NaN");
  EXPECT_EQ(Json(d, 1), "\"NaN\"");
  EXPECT_EQ(Text(d, 2), "-inf");
  EXPECT_EQ(Json(d, 2), "\"-Infinity\"");
  EXPECT_EQ(Text(d, 3), "0.1");
  auto f = PrimitiveArray<float>(pool(), float32(), {1.1f});
  EXPECT_EQ(Text(f, 0), "1.1");
  auto h = PrimitiveArray<uint16_t>(pool(), float16(), {0x3C00, 0xC000, 0x3555});
  EXPECT_EQ(Text(h, 0), "1");
  EXPECT_EQ(Text(h, 1), "-2");
  EXPECT_EQ(Text(h, 2), "0.33325195");
}

TEST_F(ValueFormatTest, HalfConversions) {
  EXPECT_EQ(DoubleToHalf(1.0), 0x3C00);
  EXPECT_EQ(DoubleToHalf(-2.0), 0xC000);
  EXPECT_EQ(DoubleToHalf(65504.0), 0x7BFF);
  EXPECT_EQ(DoubleToHalf(1e6), 0x7C00);
  EXPECT_EQ(DoubleToHalf(std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(DoubleToHalf(0.0), 0x0000);
  EXPECT_TRUE(std::isnan(HalfToDouble(DoubleToHalf(std::nan("")))));
  for (uint32_t bits = 0; bits < 0x7C00; ++bits) {
    ASSERT_EQ(DoubleToHalf(HalfToDouble(static_cast<uint16_t>(bits))), bits) << bits;
  }
}

TEST_F(ValueFormatTest, StringsAndEscaping) {
  const std::string weird = std::string("q\"b\\\n\x01") + "\xC3\xA9" + "\xFF" + "\xE2\x82";
  auto s = StringArray(pool(), {"plain", weird});
  EXPECT_EQ(Text(s, 0), "plain");
  EXPECT_EQ(Json(s, 0), "\"plain\"");
  EXPECT_EQ(Text(s, 1), weird);
  EXPECT_EQ(Json(s, 1), "\"q\\\"b\\\\\\n\\u0001\xC3\xA9\\ufffd\\ufffd\\ufffd\"");
  std::string out;
  AppendJsonString("\xED\xA0\x80", &out);  // surrogate: not valid UTF-8
  EXPECT_EQ(out, "\"\\ufffd\\ufffd\\ufffd\"");
}

TEST_F(ValueFormatTest, BinaryAndFixedSizeBinaryAsHex) {
  auto type = fixed_size_binary(3);
  auto f = MakeArray(type, 2, {nullptr, BytesOf(pool(), std::string("\x00\xAB\x10\x01\x02\x03", 6))});
  EXPECT_EQ(Text(f, 0), "00AB10");
  EXPECT_EQ(Json(f, 1), "\"010203\"");
  auto b = MakeArray(binary(), 1, {nullptr, BufferOf<int32_t>(pool(), {0, 2}), BytesOf(pool(), "\xDE\xAD")});
  EXPECT_EQ(Text(b, 0), "DEAD");
}

TEST_F(ValueFormatTest, BinaryViewInlineAndOutOfLine) {
  std::vector<uint8_t> views(32, 0);
  const std::string small = "hi";
  const std::string big = "0123456789abcdefXYZ";
  int32_t size = 2;
  std::memcpy(views.data(), &size, 4);
  std::memcpy(views.data() + 4, small.data(), 2);
  size = static_cast<int32_t>(big.size());
  int32_t buffer_index = 0, offset = 3;
  std::memcpy(views.data() + 16, &size, 4);
  std::memcpy(views.data() + 20, big.data(), 4);
  std::memcpy(views.data() + 24, &buffer_index, 4);
  std::memcpy(views.data() + 28, &offset, 4);
  auto a = MakeArray(utf8_view(), 2, {nullptr, BufferOf(pool(), views), BytesOf(pool(), "___" + big)});
  EXPECT_EQ(Text(a, 0), "hi");
  EXPECT_EQ(Text(a, 1), big);
  EXPECT_EQ(BinaryValueAt(*a, 1), big);
}

TEST_F(ValueFormatTest, DecimalsWithScale) {
  // decimal128(10, 2): -12345 -> -123.45; 5 -> 0.05.
  std::vector<int64_t> words = {-12345, -1, 5, 0};
  auto d = MakeArray(decimal(128, 10, 2), 2, {nullptr, BufferOf(pool(), words)});
  EXPECT_EQ(Text(d, 0), "-123.45");
  EXPECT_EQ(Json(d, 0), "\"-123.45\"");
  EXPECT_EQ(Text(d, 1), "0.05");
  auto d32 = MakeArray(decimal(32, 5, 0), 1, {nullptr, BufferOf<int32_t>(pool(), {-7})});
  EXPECT_EQ(Text(d32, 0), "-7");
  // decimal256 minimum: -2^255.
  std::vector<uint64_t> min256 = {0, 0, 0, uint64_t{1} << 63};
  auto d256 = MakeArray(decimal(256, 76, 0), 1, {nullptr, BufferOf(pool(), min256)});
  EXPECT_EQ(Text(d256, 0), "-57896044618658097711785492504343953926634992332820282019728792003956564819968");
  auto neg_scale = MakeArray(decimal(64, 5, -2), 1, {nullptr, BufferOf<int64_t>(pool(), {12})});
  EXPECT_EQ(Text(neg_scale, 0), "1200");
}

TEST_F(ValueFormatTest, Temporal) {
  auto date = PrimitiveArray<int32_t>(pool(), date32(), {18262, -1});
  EXPECT_EQ(Text(date, 0), "2020-01-01");
  EXPECT_EQ(Text(date, 1), "1969-12-31");
  EXPECT_EQ(Json(date, 0), "\"2020-01-01\"");
  auto d64 = PrimitiveArray<int64_t>(pool(), date64(), {int64_t{18262} * 86400000});
  EXPECT_EQ(Text(d64, 0), "2020-01-01");
  auto t32 = PrimitiveArray<int32_t>(pool(), time32(TimeUnit::kMilli), {3723004});
  EXPECT_EQ(Text(t32, 0), "01:02:03.004");
  auto t64 = PrimitiveArray<int64_t>(pool(), time64(TimeUnit::kNano), {1});
  EXPECT_EQ(Text(t64, 0), "00:00:00.000000001");
  auto naive = PrimitiveArray<int64_t>(pool(), timestamp(TimeUnit::kMilli), {1500, -1});
  EXPECT_EQ(Text(naive, 0), "1970-01-01T00:00:01.500");
  EXPECT_EQ(Text(naive, 1), "1969-12-31T23:59:59.999");
  auto utc = PrimitiveArray<int64_t>(pool(), timestamp(TimeUnit::kSecond, "UTC"), {86400});
  EXPECT_EQ(Text(utc, 0), "1970-01-02T00:00:00Z");
  EXPECT_EQ(Json(utc, 0), "\"1970-01-02T00:00:00Z\"");
  auto fixed = PrimitiveArray<int64_t>(pool(), timestamp(TimeUnit::kSecond, "+05:30"), {0});
  EXPECT_EQ(Text(fixed, 0), "1970-01-01T05:30:00+05:30");
  auto named = PrimitiveArray<int64_t>(pool(), timestamp(TimeUnit::kMicro, "Europe/Paris"), {0});
  EXPECT_EQ(Text(named, 0), "1970-01-01T00:00:00.000000Z[Europe/Paris]");
  auto dur = PrimitiveArray<int64_t>(pool(), duration(TimeUnit::kMilli), {15});
  EXPECT_EQ(Text(dur, 0), "15ms");
  EXPECT_EQ(Json(dur, 0), "15");
  // Extreme values do not overflow.
  auto extreme = PrimitiveArray<int64_t>(pool(), timestamp(TimeUnit::kSecond),
                                         {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()});
  EXPECT_FALSE(Text(extreme, 0).empty());
  EXPECT_FALSE(Text(extreme, 1).empty());
}

TEST_F(ValueFormatTest, Intervals) {
  auto ym = PrimitiveArray<int32_t>(pool(), interval_year_month(), {14});
  EXPECT_EQ(Text(ym, 0), "14M");
  EXPECT_EQ(Json(ym, 0), "{\"months\":14}");
  auto dt = MakeArray(interval_day_time(), 1, {nullptr, BufferOf<int32_t>(pool(), {1, 3})});
  EXPECT_EQ(Text(dt, 0), "1d3ms");
  EXPECT_EQ(Json(dt, 0), "{\"days\":1,\"milliseconds\":3}");
  std::vector<uint8_t> mdn(16);
  int32_t months = 1, days = 2;
  int64_t nanos = 3;
  std::memcpy(mdn.data(), &months, 4);
  std::memcpy(mdn.data() + 4, &days, 4);
  std::memcpy(mdn.data() + 8, &nanos, 8);
  auto m = MakeArray(interval_month_day_nano(), 1, {nullptr, BufferOf(pool(), mdn)});
  EXPECT_EQ(Text(m, 0), "1M2d3ns");
  EXPECT_EQ(Json(m, 0), "{\"months\":1,\"days\":2,\"nanoseconds\":3}");
}

TEST_F(ValueFormatTest, NestedTypes) {
  auto l = ListArray(pool(), Int32Array(pool(), {1, 2, 3}), {0, 2, 2, 3}, {true, false, true});
  EXPECT_EQ(Text(l, 0), "[1, 2]");
  EXPECT_EQ(Json(l, 0), "[1,2]");
  EXPECT_EQ(Text(l, 1), "null");
  EXPECT_EQ(Text(l, 2), "[3]");

  auto st_type = struct_({field("a", int32()), field("b", utf8())});
  auto s = MakeArray(st_type, 1, {nullptr}, {Int32Array(pool(), {1}), StringArray(pool(), {"x"})});
  EXPECT_EQ(Text(s, 0), "{a: 1, b: x}");
  EXPECT_EQ(Json(s, 0), "{\"a\":1,\"b\":\"x\"}");

  auto entries_type = struct_({field("key", utf8(), false), field("value", int32())});
  auto entries =
      MakeArray(entries_type, 2, {nullptr}, {StringArray(pool(), {"k", "j"}), Int32Array(pool(), {1, std::nullopt})});
  auto m =
      MakeArray(map(field("entries", entries_type, false)), 1, {nullptr, BufferOf<int32_t>(pool(), {0, 2})}, {entries});
  EXPECT_EQ(Text(m, 0), "{k: 1, j: null}");
  EXPECT_EQ(Json(m, 0), "{\"k\":1,\"j\":null}");

  auto fsl = MakeArray(fixed_size_list(field("item", int32()), 2), 2, {nullptr}, {Int32Array(pool(), {1, 2, 3, 4})});
  EXPECT_EQ(Text(fsl, 1), "[3, 4]");
}

TEST_F(ValueFormatTest, DictionaryUnionAndRunEndDecoded) {
  auto idx = PrimitiveArray<int16_t>(pool(), int16(), {1, 0, std::nullopt});
  auto d = std::make_shared<ArrayData>(*idx);
  d->type = dictionary(int16(), utf8());
  d->dictionary = StringArray(pool(), {"a", "b"});
  EXPECT_EQ(Text(d, 0), "b");
  EXPECT_EQ(Json(d, 1), "\"a\"");
  EXPECT_EQ(Text(d, 2), "null");
  EXPECT_TRUE(IsLogicalNull(*d, 2));

  auto ut = dense_union({field("i", int32()), field("s", utf8())}, {3, 4});
  auto u = MakeArray(ut, 2, {BufferOf<int8_t>(pool(), {4, 3}), BufferOf<int32_t>(pool(), {0, 0})},
                     {Int32Array(pool(), {7}), StringArray(pool(), {"z"})});
  EXPECT_EQ(Text(u, 0), "z");
  EXPECT_EQ(Json(u, 1), "7");

  auto rt = run_end_encoded(field("run_ends", int16(), false), field("values", int32()));
  auto r =
      MakeArray(rt, 4, {}, {PrimitiveArray<int16_t>(pool(), int16(), {1, 4}), Int32Array(pool(), {5, std::nullopt})});
  EXPECT_EQ(Text(r, 0), "5");
  EXPECT_EQ(Text(r, 3), "null");
  EXPECT_TRUE(IsLogicalNull(*r, 2));
  EXPECT_EQ(RunIndexAt(*r, 3), 1);
}

TEST_F(ValueFormatTest, ManyRowsQuickly) {
  std::vector<std::optional<int32_t>> values(200000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i);
  auto a = Int32Array(pool(), values);
  std::string out;
  for (int64_t i = 0; i < a->length; ++i) {
    FormatValue(*a, i, ValueFormat::kJson, &out);
    out.push_back(',');
  }
  EXPECT_GT(out.size(), 1000000u);
}

}  // namespace
}  // namespace quiver
