// Tests of the per-TypeId table (type_info.h) and of what reads it:
// DataType::ToString, the C Data format strings (export and import),
// TypeParametersEqual, IsNested and LeafType.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "quiver/columnar/c_data.h"
#include "quiver/columnar/layout.h"
#include "quiver/columnar/type_info.h"
#include "quiver/columnar/type_visit.h"
#include "quiver/testing/status_assertions.h"

namespace quiver {
namespace {

TEST(TypeInfoTest, EveryIdHasItsOwnRowAndUniqueNames) {
  std::set<std::string_view> names;
  for (int i = 0; i < kNumTypeIds; ++i) {
    const auto id = static_cast<TypeId>(i);
    const TypeInfo& info = TypeInfoOf(id);
    EXPECT_EQ(info.id, id) << i;
    EXPECT_FALSE(info.name.empty()) << i;
    EXPECT_TRUE(names.insert(info.name).second) << "name repeated: " << info.name;
    // The dictionary alone borrows its format (its index type's).
    EXPECT_EQ(info.c_format.empty(), id == TypeId::kDictionary) << info.name;
  }
  const TypeInfo& unknown = TypeInfoOf(static_cast<TypeId>(200));
  EXPECT_EQ(unknown.name, "<unknown type>");
  EXPECT_EQ(unknown.c_format, "");
}

// Each leaf row round-trips: the shared instance, its text, its format
// string exported and imported back to the same id.
TEST(TypeInfoTest, LeafRowsRoundTripThroughTheFactoriesAndTheCDataFormat) {
  int leaves = 0;
  for (int i = 0; i < kNumTypeIds; ++i) {
    const auto id = static_cast<TypeId>(i);
    const TypeInfo& info = TypeInfoOf(id);
    const bool leaf = info.params == TypeParams::kNone && info.child_rows == ChildRows::kNone;
    const DataTypePtr type = LeafType(id);
    if (!leaf) {
      EXPECT_EQ(type, nullptr) << info.name;
      EXPECT_FALSE(LeafTypeIdOfCFormat(info.c_format).has_value()) << info.name;
      continue;
    }
    ++leaves;
    ASSERT_NE(type, nullptr) << info.name;
    EXPECT_EQ(type->id, id);
    EXPECT_EQ(type->ToString(), info.name);
    ASSERT_OK_AND_ASSIGN(std::string format, CDataFormatOf(*type));
    EXPECT_EQ(format, info.c_format);
    EXPECT_EQ(LeafTypeIdOfCFormat(format), id) << format;
  }
  EXPECT_EQ(leaves, 24);  // null, bool, 8 integers, 3 floats, 6 binary/utf8, 2 dates, 3 intervals
  EXPECT_EQ(date64()->unit, TimeUnit::kMilli);
  EXPECT_FALSE(LeafTypeIdOfCFormat("").has_value());
  EXPECT_FALSE(LeafTypeIdOfCFormat("w:4").has_value());
  EXPECT_FALSE(LeafTypeIdOfCFormat("tsu:").has_value());
  EXPECT_FALSE(LeafTypeIdOfCFormat("+s").has_value());
  EXPECT_FALSE(LeafTypeIdOfCFormat("cc").has_value());
}

TEST(TypeInfoTest, ParametricTypesTextAndFormat) {
  struct Case {
    DataTypePtr type;
    std::string text;
    std::string format;
  };
  const FieldPtr item = field("item", int32());
  const Case cases[] = {
      {fixed_size_binary(16), "fixed_size_binary[16]", "w:16"},
      {decimal(128, 38, 9), "decimal128(38, 9)", "d:38,9"},
      {decimal(256, 50, -2), "decimal256(50, -2)", "d:50,-2,256"},
      {time32(TimeUnit::kMilli), "time32[ms]", "ttm"},
      {time64(TimeUnit::kNano), "time64[ns]", "ttn"},
      {duration(TimeUnit::kSecond), "duration[s]", "tDs"},
      {timestamp(TimeUnit::kMicro), "timestamp[us]", "tsu:"},
      {timestamp(TimeUnit::kNano, "Europe/Paris"), "timestamp[ns, tz=Europe/Paris]", "tsn:Europe/Paris"},
      {list(item), "list<item: int32>", "+l"},
      {large_list_view(item), "large_list_view<item: int32>", "+vL"},
      {fixed_size_list(item, 3), "fixed_size_list<item: int32>[3]", "+w:3"},
      {struct_({field("a", utf8(), false)}), "struct<a: utf8 not null>", "+s"},
      {map(field("entries", struct_({field("key", utf8(), false), field("value", int64())}), false), true),
       "map<utf8, int64, keys_sorted>", "+m"},
      {sparse_union({field("a", int8()), field("b", utf8())}, {5, 7}), "sparse_union<a: int8=5, b: utf8=7>", "+us:5,7"},
      {dense_union({field("a", int8())}, {0}), "dense_union<a: int8=0>", "+ud:0"},
      {run_end_encoded(field("run_ends", int32(), false), field("values", utf8())),
       "run_end_encoded<run_ends: int32, values: utf8>", "+r"},
      {dictionary(int16(), utf8(), true), "dictionary<values=utf8, indices=int16, ordered=1>", "s"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.type->ToString(), c.text);
    ASSERT_OK_AND_ASSIGN(std::string format, CDataFormatOf(*c.type));
    EXPECT_EQ(format, c.format) << c.text;
  }
  // A malformed map or run-end encoded type prints its children as they are.
  auto bad_map = std::make_shared<DataType>(*map(field("entries", struct_({field("key", utf8(), false)}), false)));
  EXPECT_EQ(bad_map->ToString(), "map<entries: struct<key: utf8 not null> not null>");
  auto bad_ree = std::make_shared<DataType>();
  bad_ree->id = TypeId::kRunEndEncoded;
  EXPECT_EQ(bad_ree->ToString(), "run_end_encoded<>");
}

TEST(TypeInfoTest, ParametersCompareByTheirKind) {
  EXPECT_TRUE(TypeParametersEqual(*fixed_size_binary(4), *fixed_size_binary(4)));
  EXPECT_FALSE(TypeParametersEqual(*fixed_size_binary(4), *fixed_size_binary(8)));
  EXPECT_FALSE(TypeParametersEqual(*decimal(128, 10, 2), *decimal(128, 10, 3)));
  EXPECT_FALSE(TypeParametersEqual(*decimal(128, 10, 2), *decimal(256, 10, 2)));
  EXPECT_FALSE(TypeParametersEqual(*time32(TimeUnit::kSecond), *time32(TimeUnit::kMilli)));
  EXPECT_FALSE(TypeParametersEqual(*duration(TimeUnit::kSecond), *duration(TimeUnit::kMilli)));
  EXPECT_FALSE(TypeParametersEqual(*timestamp(TimeUnit::kSecond, "UTC"), *timestamp(TimeUnit::kSecond)));
  EXPECT_TRUE(TypeParametersEqual(*timestamp(TimeUnit::kSecond, "UTC"), *timestamp(TimeUnit::kSecond, "UTC")));
  const FieldPtr item = field("item", int32());
  EXPECT_FALSE(TypeParametersEqual(*fixed_size_list(item, 2), *fixed_size_list(item, 3)));
  const FieldPtr entries = field("entries", struct_({field("key", utf8(), false), field("value", int64())}), false);
  EXPECT_FALSE(TypeParametersEqual(*map(entries, true), *map(entries, false)));
  EXPECT_FALSE(TypeParametersEqual(*sparse_union({item}, {1}), *sparse_union({item}, {2})));
  EXPECT_FALSE(TypeParametersEqual(*sparse_union({item}, {1}), *dense_union({item}, {1})));
  // Children and dictionary types are not parameters (DataType::Equals compares them).
  EXPECT_TRUE(TypeParametersEqual(*list(item), *list(field("item", utf8()))));
  EXPECT_TRUE(TypeParametersEqual(*dictionary(int8(), utf8()), *dictionary(int32(), utf8(), true)));
  EXPECT_FALSE(dictionary(int8(), utf8())->Equals(*dictionary(int8(), utf8(), true)));
}

TEST(TypeInfoTest, NestedIsHavingChildRows) {
  for (int i = 0; i < kNumTypeIds; ++i) {
    const auto id = static_cast<TypeId>(i);
    const bool expect = id == TypeId::kList || id == TypeId::kLargeList || id == TypeId::kListView ||
                        id == TypeId::kLargeListView || id == TypeId::kFixedSizeList || id == TypeId::kStruct ||
                        id == TypeId::kMap || id == TypeId::kSparseUnion || id == TypeId::kDenseUnion ||
                        id == TypeId::kRunEndEncoded;
    EXPECT_EQ(IsNested(id), expect) << TypeInfoOf(id).name;
  }
  EXPECT_TRUE(IsTemporal(TypeId::kTimestamp));
  EXPECT_TRUE(IsTemporal(TypeId::kDate32));
  EXPECT_FALSE(IsTemporal(TypeId::kIntervalYearMonth));
  EXPECT_FALSE(IsTemporal(TypeId::kInt64));
}

}  // namespace
}  // namespace quiver
