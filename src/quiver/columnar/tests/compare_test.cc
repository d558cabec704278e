// Tests for quiver/columnar/compare.h: equality, first-difference messages,
// nulls, offsets, float tolerance, dictionaries, nested and encoded types.
#include "quiver/columnar/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "quiver/testing/array_builders.h"
#include "quiver/testing/array_readers.h"
#include "quiver/testing/status_assertions.h"

namespace quiver {
namespace {

using testing::BitmapOf;
using testing::BufferOf;
using testing::Int32Array;
using testing::ListArray;
using testing::MakeArray;
using testing::PrimitiveArray;
using testing::StringArray;

class CompareTest : public ::testing::Test {
 protected:
  MemoryPool* pool() { return pool_.get(); }

  ArrayDataPtr Slice(const ArrayDataPtr& a, int64_t offset, int64_t length) {
    auto r = SliceArray(a, offset, length);
    EXPECT_OK(r);
    return *r;
  }

  ArrayDataPtr Float64s(const std::vector<std::optional<double>>& v) {
    return PrimitiveArray<double>(pool(), float64(), v);
  }

  ArrayDataPtr DictArray(const std::vector<std::optional<int8_t>>& indices, ArrayDataPtr dict) {
    auto idx = PrimitiveArray<int8_t>(pool(), int8(), indices);
    auto a = std::make_shared<ArrayData>(*idx);
    a->type = dictionary(int8(), dict->type);
    a->dictionary = std::move(dict);
    return a;
  }

  Status Cmp(const ArrayDataPtr& e, const ArrayDataPtr& a, CompareOptions opts = {}) {
    return CompareArrays(*e, *a, opts, "col");
  }

  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

TEST_F(CompareTest, EqualIntegers) { EXPECT_OK(Cmp(Int32Array(pool(), {1, 2, 3}), Int32Array(pool(), {1, 2, 3}))); }

TEST_F(CompareTest, FirstDifferenceNamesRowAndValues) {
  Status st = Cmp(Int32Array(pool(), {1, 2, 3, 5}), Int32Array(pool(), {1, 2, 4, 6}));
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("col[2]"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("expected 3"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("actual 4"), std::string::npos) << st.message();
}

TEST_F(CompareTest, ValuesUnderNullsIgnored) {
  // Same validity, different bytes under the null.
  auto bitmap = BitmapOf(pool(), {true, false, true}, nullptr);
  auto e = MakeArray(int32(), 3, {bitmap, BufferOf<int32_t>(pool(), {1, 7, 3})}, {}, 1);
  auto a = MakeArray(int32(), 3, {bitmap, BufferOf<int32_t>(pool(), {1, 99, 3})}, {}, 1);
  EXPECT_OK(Cmp(e, a));
}

TEST_F(CompareTest, NullVersusValueDiffers) {
  Status st = Cmp(Int32Array(pool(), {1, std::nullopt}), Int32Array(pool(), {1, 2}));
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("col[1]"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("expected null"), std::string::npos) << st.message();
}

TEST_F(CompareTest, RespectsOffsetsOnBothSides) {
  auto e = Slice(Int32Array(pool(), {9, 1, 2, std::nullopt, 8}), 1, 3);
  auto a = Slice(Int32Array(pool(), {7, 7, 1, 2, std::nullopt}), 2, 3);
  EXPECT_OK(Cmp(e, a));
  auto b = Slice(Int32Array(pool(), {7, 7, 1, 3, std::nullopt}), 2, 3);
  Status st = Cmp(e, b);
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("col[1]"), std::string::npos) << st.message();
}

TEST_F(CompareTest, LengthAndTypeMismatch) {
  Status st = Cmp(Int32Array(pool(), {1}), Int32Array(pool(), {1, 2}));
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("length"), std::string::npos) << st.message();
  st = Cmp(Int32Array(pool(), {1}), PrimitiveArray<int64_t>(pool(), int64(), {1}));
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("type mismatch"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(int32()->ToString()), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(int64()->ToString()), std::string::npos) << st.message();
}

TEST_F(CompareTest, FloatTolerance) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_OK(Cmp(Float64s({1.0, 100.0, nan, inf}), Float64s({1.000001, 100.0005, nan, inf})));
  EXPECT_TRUE(Cmp(Float64s({1.0}), Float64s({1.1})).IsInvalid());
  EXPECT_TRUE(Cmp(Float64s({nan}), Float64s({1.0})).IsInvalid());
  EXPECT_TRUE(Cmp(Float64s({inf}), Float64s({1e308})).IsInvalid());
  EXPECT_TRUE(Cmp(Float64s({inf}), Float64s({-inf})).IsInvalid());
  CompareOptions exact;
  exact.float_abs_tolerance = 0;
  exact.float_rel_tolerance = 0;
  EXPECT_TRUE(Cmp(Float64s({1.0}), Float64s({1.000001}), exact).IsInvalid());
  // float32 too.
  auto e = PrimitiveArray<float>(pool(), float32(), {1.5f, std::nullopt});
  auto a = PrimitiveArray<float>(pool(), float32(), {1.5000001f, std::nullopt});
  EXPECT_OK(Cmp(e, a));
}

TEST_F(CompareTest, StringsByBytesWhateverTheOffsets) {
  auto e = StringArray(pool(), {"ab", std::nullopt, "", "xyz"});
  auto a = Slice(StringArray(pool(), {"zzz", "ab", std::nullopt, "", "xyz"}), 1, 4);
  EXPECT_OK(Cmp(e, a));
  auto large = StringArray<int64_t>(pool(), {"ab", std::nullopt, "", "xyz"});
  EXPECT_TRUE(Cmp(e, large).IsInvalid());  // utf8 vs large_utf8: type mismatch
  Status st = Cmp(e, StringArray(pool(), {"ab", std::nullopt, "", "xyw"}));
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("expected xyz, actual xyw"), std::string::npos) << st.message();
}

TEST_F(CompareTest, DictionariesCompareDecoded) {
  auto e = DictArray({0, 1, std::nullopt, 0}, StringArray(pool(), {"a", "b"}));
  auto a = DictArray({2, 0, 1, 2}, StringArray(pool(), {"b", std::nullopt, "a"}));
  // Row 2: index null vs valid index to a null value: both logically null.
  EXPECT_OK(Cmp(e, a));
  auto c = DictArray({0, 0, std::nullopt, 0}, StringArray(pool(), {"a", "b"}));
  Status st = Cmp(e, c);
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("col[1]"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("expected b, actual a"), std::string::npos) << st.message();
}

TEST_F(CompareTest, ListsByLogicalRanges) {
  auto e = ListArray(pool(), Int32Array(pool(), {1, 2, 3, 4}), {0, 2, 2, 4});
  auto a = ListArray(pool(), Int32Array(pool(), {0, 0, 1, 2, 3, 4}), {2, 4, 4, 6});
  EXPECT_OK(Cmp(e, a));
  auto b = ListArray(pool(), Int32Array(pool(), {1, 2, 3, 5}), {0, 2, 2, 4});
  Status st = Cmp(e, b);
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("col[2][1]"), std::string::npos) << st.message();
  auto c = ListArray(pool(), Int32Array(pool(), {1, 2, 3, 4}), {0, 1, 2, 4});
  st = Cmp(e, c);
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("list length"), std::string::npos) << st.message();
}

TEST_F(CompareTest, ListViewAgainstItself) {
  // list_view rows [1,2], [], [3]: offsets/sizes in arbitrary order.
  auto child = Int32Array(pool(), {3, 1, 2});
  auto type = list_view(field("item", int32()));
  auto e = MakeArray(type, 3, {nullptr, BufferOf<int32_t>(pool(), {1, 0, 0}), BufferOf<int32_t>(pool(), {2, 0, 1})},
                     {child});
  auto child2 = Int32Array(pool(), {1, 2, 3});
  auto a = MakeArray(type, 3, {nullptr, BufferOf<int32_t>(pool(), {0, 3, 2}), BufferOf<int32_t>(pool(), {2, 0, 1})},
                     {child2});
  EXPECT_OK(Cmp(e, a));
}

TEST_F(CompareTest, StructNamesNestedPath) {
  auto type = struct_({field("a", int32()), field("b", utf8())});
  auto e = MakeArray(type, 2, {nullptr}, {Int32Array(pool(), {1, 2}), StringArray(pool(), {"x", "y"})});
  auto a = MakeArray(type, 2, {nullptr}, {Int32Array(pool(), {1, 2}), StringArray(pool(), {"x", "z"})});
  Status st = Cmp(e, a);
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("col[1].b"), std::string::npos) << st.message();
  // Struct with an offset: children are read at parent offset + row.
  auto wide = MakeArray(type, 3, {nullptr}, {Int32Array(pool(), {0, 1, 2}), StringArray(pool(), {"q", "x", "y"})});
  EXPECT_OK(Cmp(e, Slice(wide, 1, 2)));
}

TEST_F(CompareTest, RunEndEncodedByExpansion) {
  auto type = run_end_encoded(field("run_ends", int32(), false), field("values", utf8()));
  auto e = MakeArray(type, 3, {}, {Int32Array(pool(), {2, 3}), StringArray(pool(), {"a", "b"})});
  auto a = MakeArray(type, 3, {}, {Int32Array(pool(), {1, 2, 3}), StringArray(pool(), {"a", "a", "b"})});
  EXPECT_OK(Cmp(e, a));
  auto b = MakeArray(type, 3, {}, {Int32Array(pool(), {1, 3}), StringArray(pool(), {"a", "b"})});
  Status st = Cmp(e, b);
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("col[1]"), std::string::npos) << st.message();
}

TEST_F(CompareTest, SparseUnionByCodeAndValue) {
  auto type = sparse_union({field("i", int32()), field("s", utf8())}, {5, 7});
  auto make = [&](std::vector<int8_t> codes, ArrayDataPtr ints, ArrayDataPtr strs) {
    return MakeArray(type, static_cast<int64_t>(codes.size()), {BufferOf(pool(), codes)},
                     {std::move(ints), std::move(strs)});
  };
  auto e = make({5, 7}, Int32Array(pool(), {1, 0}), StringArray(pool(), {"", "s"}));
  auto a = make({5, 7}, Int32Array(pool(), {1, 9}), StringArray(pool(), {"zz", "s"}));
  EXPECT_OK(Cmp(e, a));
  auto b = make({5, 5}, Int32Array(pool(), {1, 9}), StringArray(pool(), {"zz", "s"}));
  Status st = Cmp(e, b);
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("type code"), std::string::npos) << st.message();
}

TEST_F(CompareTest, BatchesCompareSchemaAndColumns) {
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("x", int32()), field("y", utf8())};
  auto make = [&](SchemaPtr s, ArrayDataPtr x, ArrayDataPtr y) {
    auto b = std::make_shared<RecordBatch>();
    b->schema = std::move(s);
    b->num_rows = x->length;
    b->columns = {std::move(x), std::move(y)};
    return b;
  };
  auto e = make(schema, Int32Array(pool(), {1, 2}), StringArray(pool(), {"a", "b"}));
  auto a = make(schema, Int32Array(pool(), {1, 2}), StringArray(pool(), {"a", "b"}));
  EXPECT_OK(CompareBatches(*e, *a, {}));

  auto c = make(schema, Int32Array(pool(), {1, 2}), StringArray(pool(), {"a", "c"}));
  Status st = CompareBatches(*e, *c, {});
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("y[1]"), std::string::npos) << st.message();

  auto renamed = std::make_shared<Schema>();
  renamed->fields = {field("x", int32()), field("z", utf8())};
  st = CompareBatches(*e, *make(renamed, Int32Array(pool(), {1, 2}), StringArray(pool(), {"a", "b"})), {});
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("name"), std::string::npos) << st.message();

  auto nonnull = std::make_shared<Schema>();
  nonnull->fields = {field("x", int32(), false), field("y", utf8())};
  EXPECT_TRUE(
      CompareBatches(*e, *make(nonnull, Int32Array(pool(), {1, 2}), StringArray(pool(), {"a", "b"})), {}).IsInvalid());

  auto with_md = std::make_shared<Schema>(*schema);
  with_md->metadata = {{"k", "v"}};
  auto d = make(with_md, Int32Array(pool(), {1, 2}), StringArray(pool(), {"a", "b"}));
  EXPECT_OK(CompareBatches(*e, *d, {}));
  CompareOptions md;
  md.check_metadata = true;
  EXPECT_TRUE(CompareBatches(*e, *d, md).IsInvalid());
}

// Issue 10 item 1: a list's item name and a map's entries / key / value
// names are internal; CompareSchemas / CompareBatches / CompareArrays ignore
// them unless check_internal_names (even with check_metadata, which the
// integration runner sets).
TEST_F(CompareTest, InternalFieldNamesCountOnlyWhenAsked) {
  auto values = Int32Array(pool(), {1, 2, 3});
  auto e = ListArray(pool(), values, {0, 1, 3});
  auto a = std::make_shared<ArrayData>(*e);
  a->type = list(field("element", int32()));
  CompareOptions md;
  md.check_metadata = true;
  EXPECT_OK(CompareArrays(*e, *a, md, "l"));
  CompareOptions strict = md;
  strict.check_internal_names = true;
  Status st = CompareArrays(*e, *a, strict, "l");
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("type mismatch"), std::string::npos) << st.message();

  auto canonical = std::make_shared<Schema>();
  canonical->fields = {
      field("m", map(field("entries", struct_({field("key", utf8(), false), field("value", int32())}), false)))};
  auto own = std::make_shared<Schema>();
  own->fields = {field(
      "m",
      map(field("some_entries", struct_({field("some_key", utf8(), false), field("some_value", int32())}), false)))};
  EXPECT_OK(CompareSchemas(*own, *canonical, md));
  st = CompareSchemas(*own, *canonical, strict);
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_EQ(st.message(),
            "schema field 0 'm': type mismatch: expected map<utf8, int32>, actual map<utf8, int32> "
            "(internal field names differ)");
  // Nullability of the map's value field is not internal.
  auto nonnull_value = std::make_shared<Schema>();
  nonnull_value->fields = {
      field("m", map(field("entries", struct_({field("key", utf8(), false), field("value", int32(), false)}), false)))};
  st = CompareSchemas(*canonical, *nonnull_value, md);
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_EQ(st.message().find("internal"), std::string::npos) << st.message();
}

TEST_F(CompareTest, RangeEqualsPrefixAndOffsets) {
  auto old_dict = StringArray(pool(), {"a", "b", std::nullopt});
  auto grown = StringArray(pool(), {"a", "b", std::nullopt, "d"});
  CompareOptions exact;
  EXPECT_TRUE(ArrayRangeEquals(*old_dict, 0, *grown, 0, 3, exact));
  EXPECT_FALSE(ArrayRangeEquals(*old_dict, 0, *grown, 1, 3, exact));
  EXPECT_TRUE(ArrayRangeEquals(*old_dict, 1, *grown, 1, 0, exact));
  // Offsets of both sides apply.
  auto sliced = Slice(grown, 1, 3);  // [b, null, d]
  EXPECT_TRUE(ArrayRangeEquals(*sliced, 0, *old_dict, 1, 2, exact));
  EXPECT_FALSE(ArrayRangeEquals(*sliced, 0, *old_dict, 0, 2, exact));
  // Nulls against values differ; values under nulls do not count.
  auto bitmap = BitmapOf(pool(), {true, false}, nullptr);
  auto e = MakeArray(int32(), 2, {bitmap, BufferOf<int32_t>(pool(), {1, 7})}, {}, 1);
  auto a = MakeArray(int32(), 2, {bitmap, BufferOf<int32_t>(pool(), {1, 99})}, {}, 1);
  EXPECT_TRUE(ArrayRangeEquals(*e, 0, *a, 0, 2, exact));
  EXPECT_FALSE(ArrayRangeEquals(*e, 0, *Int32Array(pool(), {1, 7}), 0, 2, exact));
}

TEST_F(CompareTest, RangeEqualsFloatsAndTypes) {
  CompareOptions exact;
  exact.float_abs_tolerance = 0;
  exact.float_rel_tolerance = 0;
  auto x = Float64s({1.0, std::nan(""), 3.0});
  auto y = Float64s({1.0, std::nan(""), 3.0 + 1e-9});
  EXPECT_TRUE(ArrayRangeEquals(*x, 0, *y, 0, 2, exact));  // NaN equals NaN
  EXPECT_FALSE(ArrayRangeEquals(*x, 0, *y, 0, 3, exact));
  EXPECT_TRUE(ArrayRangeEquals(*x, 0, *y, 0, 3, CompareOptions{}));  // within tolerance
  // Different types never compare equal, not even empty ranges.
  EXPECT_FALSE(ArrayRangeEquals(*x, 0, *Int32Array(pool(), {1}), 0, 0, exact));
}

TEST_F(CompareTest, RangeEqualsOutOfBoundsIsFalse) {
  auto a = Int32Array(pool(), {1, 2, 3});
  CompareOptions o;
  EXPECT_TRUE(ArrayRangeEquals(*a, 0, *a, 0, 3, o));
  EXPECT_FALSE(ArrayRangeEquals(*a, 0, *a, 0, 4, o));
  EXPECT_FALSE(ArrayRangeEquals(*a, 2, *a, 0, 2, o));
  EXPECT_FALSE(ArrayRangeEquals(*a, 0, *a, 2, 2, o));
  EXPECT_FALSE(ArrayRangeEquals(*a, -1, *a, 0, 1, o));
  EXPECT_FALSE(ArrayRangeEquals(*a, 0, *a, 0, -1, o));
  EXPECT_TRUE(ArrayRangeEquals(*a, 3, *a, 3, 0, o));
}

TEST_F(CompareTest, RangeEqualsDictionariesByValue) {
  auto d1 = DictArray({0, 1}, StringArray(pool(), {"x", "y"}));
  auto d2 = DictArray({1, 0}, StringArray(pool(), {"y", "x"}));
  EXPECT_TRUE(ArrayRangeEquals(*d1, 0, *d2, 0, 2, CompareOptions{}));
}

}  // namespace
}  // namespace quiver
