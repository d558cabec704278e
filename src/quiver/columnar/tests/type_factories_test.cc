// Tests of the validating type factories and type rules (data_type.h,
// "validating type factories"): each rule accepts its boundary values and
// rejects the next ones with the rule's text.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "quiver/columnar/data_type.h"

namespace quiver {
namespace {

void ExpectInvalid(const Status& st, const std::string& text) {
  ASSERT_TRUE(st.IsInvalid()) << st.ToString();
  EXPECT_NE(st.message().find(text), std::string::npos) << st.message();
}

TEST(TypeFactoriesTest, IntegerWidths) {
  for (int bw : {8, 16, 32, 64}) {
    auto s = MakeIntegerType(bw, true);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_TRUE(IsSignedInteger((*s)->id));
    EXPECT_EQ((*s)->bit_width, bw);
    auto u = MakeIntegerType(bw, false);
    ASSERT_TRUE(u.ok());
    EXPECT_FALSE(IsSignedInteger((*u)->id));
  }
  ExpectInvalid(MakeIntegerType(12, true).status(), "integer bit width 12 is not 8, 16, 32 or 64");
}

TEST(TypeFactoriesTest, DecimalWidthPrecisionScale) {
  auto d = MakeDecimalType(256, 76, -3);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ((*d)->bit_width, 256);
  EXPECT_EQ((*d)->precision, 76);
  EXPECT_EQ((*d)->scale, -3);
  ExpectInvalid(MakeDecimalType(100, 3, 0).status(), "decimal bit width 100 is not 32, 64, 128 or 256");
  ExpectInvalid(MakeDecimalType(128, 0, 0).status(), "decimal precision 0 is not in [1, 76]");
  ExpectInvalid(MakeDecimalType(128, 77, 0).status(), "decimal precision 77");
  ExpectInvalid(MakeDecimalType(128, 3, int64_t{1} << 40).status(), "decimal scale");
}

TEST(TypeFactoriesTest, FixedSizeWidths) {
  EXPECT_TRUE(MakeFixedSizeBinaryType(0).ok());
  EXPECT_TRUE(MakeFixedSizeBinaryType(INT32_MAX / 8).ok());
  ExpectInvalid(MakeFixedSizeBinaryType(-1).status(), "fixed_size_binary byte width -1");
  ExpectInvalid(MakeFixedSizeBinaryType(INT32_MAX / 8 + 1).status(), "fixed_size_binary byte width");
  auto item = field("item", int32());
  auto l = MakeFixedSizeListType(item, 3);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ((*l)->list_size, 3);
  ExpectInvalid(MakeFixedSizeListType(item, -1).status(), "fixed_size_list list size -1");
  ExpectInvalid(MakeFixedSizeListType(item, int64_t{1} << 31).status(), "fixed_size_list list size");
}

TEST(TypeFactoriesTest, TimeUnitsMatchBitWidths) {
  EXPECT_EQ((*MakeTimeType(TimeUnit::kSecond, 32))->id, TypeId::kTime32);
  EXPECT_EQ((*MakeTimeType(TimeUnit::kMilli, 32))->id, TypeId::kTime32);
  EXPECT_EQ((*MakeTimeType(TimeUnit::kMicro, 64))->id, TypeId::kTime64);
  EXPECT_EQ((*MakeTimeType(TimeUnit::kNano, 64))->id, TypeId::kTime64);
  ExpectInvalid(MakeTimeType(TimeUnit::kSecond, 64).status(), "time unit s with bit width 64 (expected 32)");
  ExpectInvalid(MakeTimeType(TimeUnit::kNano, 32).status(), "(expected 64)");
}

TEST(TypeFactoriesTest, UnionTypeCodes) {
  std::vector<FieldPtr> two = {field("a", int8()), field("b", utf8())};
  auto dflt = MakeUnionType(TypeId::kSparseUnion, two, std::nullopt);
  ASSERT_TRUE(dflt.ok());
  EXPECT_EQ((*dflt)->type_codes, (std::vector<int8_t>{0, 1}));
  auto given = MakeUnionType(TypeId::kDenseUnion, two, std::vector<int64_t>{5, 127});
  ASSERT_TRUE(given.ok());
  EXPECT_EQ((*given)->id, TypeId::kDenseUnion);
  EXPECT_EQ((*given)->type_codes, (std::vector<int8_t>{5, 127}));
  ExpectInvalid(MakeUnionType(TypeId::kSparseUnion, two, std::vector<int64_t>{1}).status(),
                "union has 1 type codes for 2 children");
  ExpectInvalid(MakeUnionType(TypeId::kSparseUnion, two, std::vector<int64_t>{1, 128}).status(),
                "union type code 128 is not in [0, 127]");
  ExpectInvalid(MakeUnionType(TypeId::kSparseUnion, two, std::vector<int64_t>{-1, 0}).status(), "union type code -1");
  ExpectInvalid(MakeUnionType(TypeId::kSparseUnion, two, std::vector<int64_t>{3, 3}).status(),
                "union type code 3 is declared twice");
  ExpectInvalid(MakeUnionType(TypeId::kStruct, two, std::nullopt).status(), "union mode");
  std::vector<FieldPtr> many(129, field("x", null()));
  ExpectInvalid(MakeUnionType(TypeId::kSparseUnion, many, std::nullopt).status(), "union type code 128");
}

TEST(TypeFactoriesTest, MapEntriesAndRunEnds) {
  auto entries = field("entries", struct_({field("key", utf8(), false), field("value", int32())}), false);
  EXPECT_TRUE(MakeMapType(entries, true).ok());
  ExpectInvalid(MakeMapType(field("entries", int32(), false), false).status(),
                "map entries type int32 is not a struct of two fields");
  auto values = field("values", utf8());
  for (auto t : {int16(), int32(), int64()})
    EXPECT_TRUE(MakeRunEndEncodedType(field("run_ends", t, false), values).ok());
  ExpectInvalid(MakeRunEndEncodedType(field("run_ends", int8(), false), values).status(),
                "run ends type int8 is not int16, int32 or int64");
}

}  // namespace
}  // namespace quiver
