// Tests of type factories, traits, ToString and Equals.
#include <gtest/gtest.h>

#include "quiver/columnar/data_type.h"

namespace quiver {
namespace {

TEST(DataTypeTest, ParameterlessFactoriesAreSingletons) {
  EXPECT_EQ(int32().get(), int32().get());
  EXPECT_EQ(utf8().get(), utf8().get());
  EXPECT_EQ(null().get(), null().get());
  EXPECT_EQ(int64()->bit_width, 64);
  EXPECT_EQ(uint8()->bit_width, 8);
  EXPECT_EQ(date64()->unit, TimeUnit::kMilli);
}

TEST(DataTypeTest, ToStringPrimitives) {
  EXPECT_EQ(null()->ToString(), "null");
  EXPECT_EQ(boolean()->ToString(), "bool");
  EXPECT_EQ(int8()->ToString(), "int8");
  EXPECT_EQ(int32()->ToString(), "int32");
  EXPECT_EQ(uint64()->ToString(), "uint64");
  EXPECT_EQ(float16()->ToString(), "halffloat");
  EXPECT_EQ(float32()->ToString(), "float");
  EXPECT_EQ(float64()->ToString(), "double");
  EXPECT_EQ(binary()->ToString(), "binary");
  EXPECT_EQ(utf8()->ToString(), "utf8");
  EXPECT_EQ(large_binary()->ToString(), "large_binary");
  EXPECT_EQ(large_utf8()->ToString(), "large_utf8");
  EXPECT_EQ(binary_view()->ToString(), "binary_view");
  EXPECT_EQ(utf8_view()->ToString(), "utf8_view");
  EXPECT_EQ(fixed_size_binary(4)->ToString(), "fixed_size_binary[4]");
  EXPECT_EQ(decimal(128, 10, 2)->ToString(), "decimal128(10, 2)");
  EXPECT_EQ(decimal(256, 40, -3)->ToString(), "decimal256(40, -3)");
  EXPECT_EQ(decimal(32, 5, 1)->ToString(), "decimal32(5, 1)");
}

TEST(DataTypeTest, ToStringTemporal) {
  EXPECT_EQ(date32()->ToString(), "date32[day]");
  EXPECT_EQ(date64()->ToString(), "date64[ms]");
  EXPECT_EQ(time32(TimeUnit::kMilli)->ToString(), "time32[ms]");
  EXPECT_EQ(time64(TimeUnit::kNano)->ToString(), "time64[ns]");
  EXPECT_EQ(timestamp(TimeUnit::kMilli, "UTC")->ToString(), "timestamp[ms, tz=UTC]");
  EXPECT_EQ(timestamp(TimeUnit::kMicro)->ToString(), "timestamp[us]");
  EXPECT_EQ(timestamp(TimeUnit::kSecond, "+05:30")->ToString(), "timestamp[s, tz=+05:30]");
  EXPECT_EQ(duration(TimeUnit::kNano)->ToString(), "duration[ns]");
  EXPECT_EQ(interval_year_month()->ToString(), "interval[month]");
  EXPECT_EQ(interval_day_time()->ToString(), "interval[day_time]");
  EXPECT_EQ(interval_month_day_nano()->ToString(), "interval[month_day_nano]");
}

TEST(DataTypeTest, ToStringNested) {
  EXPECT_EQ(list(field("item", int32()))->ToString(), "list<item: int32>");
  EXPECT_EQ(list(field("item", int32(), false))->ToString(), "list<item: int32 not null>");
  EXPECT_EQ(large_list(field("x", utf8()))->ToString(), "large_list<x: utf8>");
  EXPECT_EQ(list_view(field("item", int8()))->ToString(), "list_view<item: int8>");
  EXPECT_EQ(large_list_view(field("item", int8()))->ToString(), "large_list_view<item: int8>");
  EXPECT_EQ(fixed_size_list(field("item", float32()), 3)->ToString(), "fixed_size_list<item: float>[3]");
  EXPECT_EQ(struct_({field("a", int32()), field("b", utf8())})->ToString(), "struct<a: int32, b: utf8>");
  EXPECT_EQ(struct_({})->ToString(), "struct<>");
  auto entries = struct_({field("key", utf8(), false), field("value", int32())});
  EXPECT_EQ(map(field("entries", entries, false))->ToString(), "map<utf8, int32>");
  EXPECT_EQ(map(field("entries", entries, false), true)->ToString(), "map<utf8, int32, keys_sorted>");
  EXPECT_EQ(dense_union({field("a", int32()), field("b", utf8())}, {0, 1})->ToString(),
            "dense_union<a: int32=0, b: utf8=1>");
  EXPECT_EQ(sparse_union({field("a", int32()), field("b", utf8())}, {5, 7})->ToString(),
            "sparse_union<a: int32=5, b: utf8=7>");
  EXPECT_EQ(run_end_encoded(field("run_ends", int32(), false), field("values", utf8()))->ToString(),
            "run_end_encoded<run_ends: int32, values: utf8>");
  EXPECT_EQ(dictionary(int32(), utf8())->ToString(), "dictionary<values=utf8, indices=int32, ordered=0>");
  EXPECT_EQ(dictionary(int8(), utf8(), true)->ToString(), "dictionary<values=utf8, indices=int8, ordered=1>");
  EXPECT_EQ(list(field("item", struct_({field("a", list(field("item", int64())))})))->ToString(),
            "list<item: struct<a: list<item: int64>>>");
}

TEST(DataTypeTest, TimeUnitNames) {
  EXPECT_EQ(TimeUnitName(TimeUnit::kSecond), "s");
  EXPECT_EQ(TimeUnitName(TimeUnit::kMilli), "ms");
  EXPECT_EQ(TimeUnitName(TimeUnit::kMicro), "us");
  EXPECT_EQ(TimeUnitName(TimeUnit::kNano), "ns");
}

TEST(DataTypeTest, Traits) {
  EXPECT_TRUE(IsInteger(TypeId::kUInt16));
  EXPECT_FALSE(IsInteger(TypeId::kFloat32));
  EXPECT_TRUE(IsSignedInteger(TypeId::kInt64));
  EXPECT_FALSE(IsSignedInteger(TypeId::kUInt64));
  EXPECT_TRUE(IsFloating(TypeId::kFloat16));
  EXPECT_TRUE(IsBinaryLike(TypeId::kUtf8));
  EXPECT_FALSE(IsBinaryLike(TypeId::kLargeUtf8));
  EXPECT_TRUE(IsLargeBinaryLike(TypeId::kLargeBinary));
  EXPECT_TRUE(IsUnion(TypeId::kDenseUnion));
  EXPECT_TRUE(IsNested(TypeId::kStruct));
  EXPECT_TRUE(IsNested(TypeId::kRunEndEncoded));
  EXPECT_FALSE(IsNested(TypeId::kDictionary));
  EXPECT_FALSE(HasValidityBitmap(TypeId::kSparseUnion));
  EXPECT_FALSE(HasValidityBitmap(TypeId::kNull));
  EXPECT_TRUE(HasValidityBitmap(TypeId::kDictionary));

  EXPECT_EQ(FixedBitWidth(*boolean()), 1);
  EXPECT_EQ(FixedBitWidth(*int32()), 32);
  EXPECT_EQ(FixedBitWidth(*float16()), 16);
  EXPECT_EQ(FixedBitWidth(*decimal(128, 10, 2)), 128);
  EXPECT_EQ(FixedBitWidth(*decimal(32, 5, 2)), 32);
  EXPECT_EQ(FixedBitWidth(*interval_month_day_nano()), 128);
  EXPECT_EQ(FixedBitWidth(*interval_day_time()), 64);
  EXPECT_EQ(FixedBitWidth(*interval_year_month()), 32);
  EXPECT_EQ(FixedBitWidth(*fixed_size_binary(5)), 40);
  EXPECT_EQ(FixedBitWidth(*dictionary(int16(), utf8())), 16);
  EXPECT_EQ(FixedBitWidth(*timestamp(TimeUnit::kNano)), 64);
  EXPECT_EQ(FixedBitWidth(*date32()), 32);
  EXPECT_EQ(FixedBitWidth(*utf8()), 0);
  EXPECT_EQ(FixedBitWidth(*struct_({})), 0);

  EXPECT_EQ(NumLayoutBuffers(*null()), 0);
  EXPECT_EQ(NumLayoutBuffers(*int32()), 2);
  EXPECT_EQ(NumLayoutBuffers(*boolean()), 2);
  EXPECT_EQ(NumLayoutBuffers(*utf8()), 3);
  EXPECT_EQ(NumLayoutBuffers(*large_binary()), 3);
  EXPECT_EQ(NumLayoutBuffers(*utf8_view()), 2);
  EXPECT_EQ(NumLayoutBuffers(*list(field("item", int32()))), 2);
  EXPECT_EQ(NumLayoutBuffers(*list_view(field("item", int32()))), 3);
  EXPECT_EQ(NumLayoutBuffers(*fixed_size_list(field("item", int32()), 2)), 1);
  EXPECT_EQ(NumLayoutBuffers(*struct_({field("a", int32())})), 1);
  auto entries = struct_({field("key", utf8(), false), field("value", int32())});
  EXPECT_EQ(NumLayoutBuffers(*map(field("entries", entries, false))), 2);
  EXPECT_EQ(NumLayoutBuffers(*sparse_union({field("a", int32())}, {0})), 1);
  EXPECT_EQ(NumLayoutBuffers(*dense_union({field("a", int32())}, {0})), 2);
  EXPECT_EQ(NumLayoutBuffers(*run_end_encoded(field("r", int32()), field("v", utf8()))), 0);
  EXPECT_EQ(NumLayoutBuffers(*dictionary(int32(), utf8())), 2);
}

TEST(DataTypeTest, EqualsIsStructural) {
  EXPECT_TRUE(int32()->Equals(*int32()));
  EXPECT_FALSE(int32()->Equals(*int64()));
  EXPECT_TRUE(timestamp(TimeUnit::kMilli, "UTC")->Equals(*timestamp(TimeUnit::kMilli, "UTC")));
  EXPECT_FALSE(timestamp(TimeUnit::kMilli, "UTC")->Equals(*timestamp(TimeUnit::kMilli)));
  EXPECT_FALSE(timestamp(TimeUnit::kMilli)->Equals(*timestamp(TimeUnit::kMicro)));
  EXPECT_FALSE(decimal(128, 10, 2)->Equals(*decimal(128, 10, 3)));
  EXPECT_FALSE(decimal(128, 10, 2)->Equals(*decimal(256, 10, 2)));
  EXPECT_FALSE(fixed_size_binary(4)->Equals(*fixed_size_binary(5)));
  EXPECT_FALSE(time32(TimeUnit::kSecond)->Equals(*time32(TimeUnit::kMilli)));

  EXPECT_TRUE(list(field("item", int32()))->Equals(*list(field("item", int32()))));
  // Internal field names (ARROW-14999) count only under check_internal_names.
  EXPECT_TRUE(list(field("item", int32()))->Equals(*list(field("x", int32()))));
  EXPECT_FALSE(list(field("item", int32()))->Equals(*list(field("x", int32())), false, /*check_internal_names=*/true));
  EXPECT_FALSE(list(field("item", int32()))->Equals(*list(field("item", int32(), false))));
  EXPECT_FALSE(list(field("item", int32()))->Equals(*large_list(field("item", int32()))));
  EXPECT_FALSE(fixed_size_list(field("item", int32()), 2)->Equals(*fixed_size_list(field("item", int32()), 3)));
  EXPECT_FALSE(struct_({field("a", int32())})->Equals(*struct_({field("a", int32()), field("b", int32())})));
  EXPECT_FALSE(dense_union({field("a", int32())}, {0})->Equals(*dense_union({field("a", int32())}, {1})));
  EXPECT_FALSE(dense_union({field("a", int32())}, {0})->Equals(*sparse_union({field("a", int32())}, {0})));
  EXPECT_TRUE(dictionary(int32(), utf8())->Equals(*dictionary(int32(), utf8())));
  EXPECT_FALSE(dictionary(int32(), utf8())->Equals(*dictionary(int8(), utf8())));
  EXPECT_FALSE(dictionary(int32(), utf8())->Equals(*dictionary(int32(), utf8(), true)));
  auto entries = struct_({field("key", utf8(), false), field("value", int32())});
  EXPECT_FALSE(map(field("entries", entries, false))->Equals(*map(field("entries", entries, false), true)));

  // Child metadata only counts when asked for.
  auto a = list(field("item", int32(), true, {{"k", "v"}}));
  auto b = list(field("item", int32()));
  EXPECT_TRUE(a->Equals(*b));
  EXPECT_FALSE(a->Equals(*b, /*check_metadata=*/true));
}

// Issue 10 item 1: a map's entries / key / value names and every list-like
// item name are not part of the type unless asked for; nullability and child
// types still are.
TEST(DataTypeTest, InternalFieldNamesAreNotPartOfTheType) {
  auto canonical = map(field("entries", struct_({field("key", utf8(), false), field("value", int32())}), false));
  auto own =
      map(field("some_entries", struct_({field("some_key", utf8(), false), field("some_value", int32())}), false));
  EXPECT_TRUE(canonical->Equals(*own));
  EXPECT_TRUE(canonical->Equals(*own, /*check_metadata=*/true));
  EXPECT_FALSE(canonical->Equals(*own, false, /*check_internal_names=*/true));
  EXPECT_TRUE(canonical->Equals(*canonical, true, true));
  // Nullability of the map's children still matters.
  auto nullable_value_not =
      map(field("entries", struct_({field("key", utf8(), false), field("value", int32(), false)}), false));
  EXPECT_FALSE(canonical->Equals(*nullable_value_not));
  auto nullable_entries = map(field("entries", struct_({field("key", utf8(), false), field("value", int32())}), true));
  EXPECT_FALSE(canonical->Equals(*nullable_entries));
  // ...and so do the key / value types.
  auto other_value = map(field("entries", struct_({field("key", utf8(), false), field("value", int64())}), false));
  EXPECT_FALSE(canonical->Equals(*other_value));
  // Every list-like type, nested: the names inside a struct stay significant.
  for (auto make : {+[](FieldPtr f) { return list(f); }, +[](FieldPtr f) { return large_list(f); },
                    +[](FieldPtr f) { return list_view(f); }, +[](FieldPtr f) { return large_list_view(f); },
                    +[](FieldPtr f) { return fixed_size_list(f, 3); }}) {
    auto a = make(field("item", struct_({field("a", int32())})));
    auto b = make(field("element", struct_({field("a", int32())})));
    auto c = make(field("item", struct_({field("b", int32())})));
    EXPECT_TRUE(a->Equals(*b)) << a->ToString();
    EXPECT_FALSE(a->Equals(*b, false, true)) << a->ToString();
    EXPECT_FALSE(a->Equals(*c)) << "struct field names are not internal: " << a->ToString();
  }
  // Through fields and schemas.
  EXPECT_TRUE(field("m", canonical)->Equals(*field("m", own)));
  EXPECT_FALSE(field("m", canonical)->Equals(*field("m", own), false, true));
  EXPECT_FALSE(field("m", canonical)->Equals(*field("n", canonical)));
}

TEST(FieldTest, ToStringAndEquals) {
  EXPECT_EQ(field("a", int32())->ToString(), "a: int32");
  EXPECT_EQ(field("a", int32(), false)->ToString(), "a: int32 not null");
  EXPECT_TRUE(field("a", int32())->Equals(*field("a", int32())));
  EXPECT_FALSE(field("a", int32())->Equals(*field("b", int32())));
  EXPECT_FALSE(field("a", int32())->Equals(*field("a", int32(), false)));
  EXPECT_FALSE(field("a", int32())->Equals(*field("a", int64())));
  auto with_md = field("a", int32(), true, {{"k", "v"}});
  EXPECT_TRUE(with_md->Equals(*field("a", int32())));
  EXPECT_FALSE(with_md->Equals(*field("a", int32()), true));
  EXPECT_TRUE(with_md->Equals(*field("a", int32(), true, {{"k", "v"}}), true));
  // Dictionary ids are IPC assignments, not compared.
  EXPECT_TRUE(field("d", dictionary(int32(), utf8()), true, {}, 3)
                  ->Equals(*field("d", dictionary(int32(), utf8()), true, {}, 7)));
}

TEST(SchemaTest, FieldIndexToStringEquals) {
  Schema s;
  s.fields = {field("a", int32(), false), field("b", utf8(), true, {{"unit", "m"}}),
              field("d", dictionary(int32(), utf8()), true, {}, 0), field("a", int64())};
  s.metadata = {{"origin", "test"}};
  EXPECT_EQ(s.num_fields(), 4);
  EXPECT_EQ(s.FieldIndex("a"), 0);
  EXPECT_EQ(s.FieldIndex("d"), 2);
  EXPECT_EQ(s.FieldIndex("zzz"), -1);
  EXPECT_EQ(s.ToString(),
            "a: int32 not null\n"
            "b: utf8\n"
            "  -- field metadata --\n"
            "  unit: 'm'\n"
            "d: dictionary<values=utf8, indices=int32, ordered=0> dictionary id=0\n"
            "a: int64\n"
            "-- schema metadata --\n"
            "origin: 'test'");

  Schema t = s;
  EXPECT_TRUE(s.Equals(t, true));
  t.metadata.clear();
  EXPECT_TRUE(s.Equals(t));
  EXPECT_FALSE(s.Equals(t, true));
  t.fields.pop_back();
  EXPECT_FALSE(s.Equals(t));
}

}  // namespace
}  // namespace quiver
