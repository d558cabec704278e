// Tests for quiver/columnar/take.h: Take and MakeArrayOfNull over every
// gatherable type, with offsets (sliced inputs), nulls, negative indices,
// empty inputs and the errors (unsupported types, indices out of range,
// 32-bit offset overflow is covered by the message only).
#include "quiver/columnar/take.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "quiver/columnar/compare.h"
#include "quiver/columnar/validate.h"
#include "quiver/testing/array_builders.h"
#include "quiver/testing/array_readers.h"

namespace quiver {
namespace {

using testing::BitmapOf;
using testing::BoolArray;
using testing::BytesOf;
using testing::Int32Array;
using testing::ListArray;
using testing::MakeArray;
using testing::StringArray;

class TakeTest : public ::testing::Test {
 protected:
  MemoryPool* pool() { return pool_.get(); }

  ArrayDataPtr TakeOk(const ArrayDataPtr& values, const std::vector<int64_t>& indices) {
    auto r = Take(*values, indices, pool(), "col");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return nullptr;
    const ArrayDataPtr& out = *r;
    EXPECT_EQ(out->offset, 0);
    EXPECT_EQ(out->length, static_cast<int64_t>(indices.size()));
    Status v = ValidateArray(*out, ValidationLevel::kFull, "taken");
    EXPECT_TRUE(v.ok()) << v.ToString();
    return out;
  }

  void ExpectEqual(const ArrayDataPtr& expected, const ArrayDataPtr& actual) {
    ASSERT_NE(actual, nullptr);
    CompareOptions exact;
    exact.float_abs_tolerance = 0;
    exact.float_rel_tolerance = 0;
    Status st = CompareArrays(*expected, *actual, exact, "col");
    EXPECT_TRUE(st.ok()) << st.ToString();
  }

  ArrayDataPtr Slice(const ArrayDataPtr& a, int64_t offset, int64_t length) {
    auto r = SliceArray(a, offset, length);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return *r;
  }

  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

TEST_F(TakeTest, Int32WithNullsAndNegativeIndices) {
  auto values = Int32Array(pool(), {10, std::nullopt, 30, 40});
  auto out = TakeOk(values, {3, -1, 1, 0, 3, 2});
  ExpectEqual(Int32Array(pool(), {40, std::nullopt, std::nullopt, 10, 40, 30}), out);
  EXPECT_EQ(out->null_count, 2);
}

TEST_F(TakeTest, NoNullsGivesNoBitmap) {
  auto out = TakeOk(Int32Array(pool(), {1, 2, 3}), {2, 2, 0});
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->null_count, 0);
  EXPECT_EQ(out->buffers[0], nullptr);
  ExpectEqual(Int32Array(pool(), {3, 3, 1}), out);
}

TEST_F(TakeTest, HonoursTheInputOffset) {
  auto values = Slice(Int32Array(pool(), {0, 1, std::nullopt, 3, 4, 5}), 2, 3);  // [null, 3, 4]
  auto out = TakeOk(values, {2, 0, 1, -1});
  ExpectEqual(Int32Array(pool(), {4, std::nullopt, 3, std::nullopt}), out);
}

TEST_F(TakeTest, Bool) {
  auto values = Slice(BoolArray(pool(), {false, true, std::nullopt, false, true}), 1, 4);  // [t, null, f, t]
  auto out = TakeOk(values, {3, 2, 1, 0, -1});
  ExpectEqual(BoolArray(pool(), {true, false, std::nullopt, true, std::nullopt}), out);
}

TEST_F(TakeTest, Strings32And64) {
  auto small = StringArray<int32_t>(pool(), {"a", "", std::nullopt, "dddd", "ee"});
  ExpectEqual(StringArray<int32_t>(pool(), {"ee", std::nullopt, std::nullopt, "", "dddd", "a"}),
              TakeOk(small, {4, 2, -1, 1, 3, 0}));
  auto large = StringArray<int64_t>(pool(), {"xx", std::nullopt, "zzz"});
  ExpectEqual(StringArray<int64_t>(pool(), {"zzz", "xx", std::nullopt}), TakeOk(large, {2, 0, 1}));
  // Sliced: offsets read relative to the slice.
  auto sliced = Slice(small, 3, 2);  // ["dddd", "ee"]
  ExpectEqual(StringArray<int32_t>(pool(), {"ee", "dddd"}), TakeOk(sliced, {1, 0}));
}

TEST_F(TakeTest, BinaryTypesKeepTheirType) {
  for (const auto& type : {binary(), large_binary()}) {
    auto s = type->id == TypeId::kBinary ? StringArray<int32_t>(pool(), {"p", "qq"})
                                         : StringArray<int64_t>(pool(), {"p", "qq"});
    auto values = std::make_shared<ArrayData>(*s);
    values->type = type;
    auto out = TakeOk(values, {1, 1, 0});
    ASSERT_NE(out, nullptr);
    EXPECT_TRUE(out->type->Equals(*type)) << type->ToString();
    auto expected_s = type->id == TypeId::kBinary ? StringArray<int32_t>(pool(), {"qq", "qq", "p"})
                                                  : StringArray<int64_t>(pool(), {"qq", "qq", "p"});
    auto expected = std::make_shared<ArrayData>(*expected_s);
    expected->type = type;
    ExpectEqual(expected, out);
  }
}

TEST_F(TakeTest, EveryFixedWidthType) {
  // clang-format off
  const std::vector<DataTypePtr> types = {
      int8(), int16(), int32(), int64(), uint8(), uint16(), uint32(), uint64(), float16(), float32(),
      float64(), decimal(128, 20, 2), decimal(256, 40, 3), date32(), date64(), time32(TimeUnit::kMilli),
      time64(TimeUnit::kNano), timestamp(TimeUnit::kMicro, "UTC"), duration(TimeUnit::kSecond),
      interval_year_month(), interval_day_time(), interval_month_day_nano(), fixed_size_binary(3)};
  // clang-format on
  for (const auto& type : types) {
    SCOPED_TRACE(type->ToString());
    const int w = FixedBitWidth(*type) / 8;
    ASSERT_GT(w, 0);
    EXPECT_TRUE(IsGatherable(*type));
    // Five rows, row r filled with byte r + 1; row 1 null; take from a
    // slice starting at row 1.
    std::string bytes;
    for (int r = 0; r < 5; ++r) bytes.append(static_cast<size_t>(w), static_cast<char>(r + 1));
    int64_t nulls = 0;
    auto bitmap = BitmapOf(pool(), {true, false, true, true, true}, &nulls);
    auto whole = MakeArray(type, 5, {bitmap, BytesOf(pool(), bytes)}, {}, nulls);
    auto values = Slice(whole, 1, 4);  // rows 1..4: null, 3, 4, 5
    auto r = Take(*values, std::vector<int64_t>{3, 0, -1, 1}, pool(), "col");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const ArrayData& out = **r;
    EXPECT_TRUE(out.type->Equals(*type));
    ASSERT_EQ(out.length, 4);
    EXPECT_EQ(out.null_count, 2);
    EXPECT_TRUE(out.IsValid(0));
    EXPECT_FALSE(out.IsValid(1));
    EXPECT_FALSE(out.IsValid(2));
    EXPECT_TRUE(out.IsValid(3));
    const uint8_t* d = out.buffers[1]->data();
    for (int b = 0; b < w; ++b) {
      EXPECT_EQ(d[0 * w + b], 5);
      EXPECT_EQ(d[2 * w + b], 0);  // a negative index: zero
      EXPECT_EQ(d[3 * w + b], 3);
    }
    EXPECT_TRUE(ValidateArray(out, ValidationLevel::kFull, "taken").ok());
  }
}

TEST_F(TakeTest, NullType) {
  auto values = MakeArray(null(), 3, {}, {}, 3);
  auto r = Take(*values, std::vector<int64_t>{0, -1, 2, 1}, pool(), "col");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->length, 4);
  EXPECT_EQ((*r)->null_count, 4);
  EXPECT_TRUE((*r)->buffers.empty());
}

TEST_F(TakeTest, NoIndices) {
  for (const auto& values :
       {Int32Array(pool(), {1, 2}), StringArray<int32_t>(pool(), {"a"}), BoolArray(pool(), {true})}) {
    auto out = TakeOk(values, {});
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->length, 0);
    EXPECT_EQ(out->null_count, 0);
  }
}

TEST_F(TakeTest, OnlyNegativeIndicesFromAnEmptyArray) {
  auto empty = StringArray<int32_t>(pool(), {});
  auto out = TakeOk(empty, {-1, -1});
  ExpectEqual(StringArray<int32_t>(pool(), {std::nullopt, std::nullopt}), out);
}

TEST_F(TakeTest, IndexOutOfRangeIsInvalidAndNamesIt) {
  auto values = Slice(Int32Array(pool(), {1, 2, 3, 4}), 1, 2);
  const int64_t held = pool_->held_bytes();
  auto r = Take(*values, std::vector<int64_t>{0, 1, 2}, pool(), "column 'x'");
  ASSERT_TRUE(r.status().IsInvalid()) << r.status().ToString();
  EXPECT_EQ(r.status().message(), "column 'x': index 2 at position 2 is outside the array of 2 rows");
  EXPECT_EQ(pool_->held_bytes(), held);
}

TEST_F(TakeTest, WithoutBoundsCheckInRangeIndicesGiveTheSameArray) {
  auto values = StringArray<int32_t>(pool(), {"a", std::nullopt, "ccc"});
  const std::vector<int64_t> indices = {2, -1, 0, 1};
  auto checked = TakeOk(values, indices);
  auto r = Take(*values, indices, pool(), "col", TakeOptions{.boundscheck = false});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectEqual(checked, *r);
}

TEST_F(TakeTest, UnsupportedTypesAreNotImplemented) {
  auto list_array = ListArray(pool(), Int32Array(pool(), {1, 2, 3}), {0, 1, 3});
  auto r = Take(*list_array, std::vector<int64_t>{0}, pool(), "column 'l'");
  ASSERT_TRUE(r.status().IsNotImplemented()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("column 'l' has type list"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("Take cannot gather"), std::string::npos) << r.status().message();
  for (const auto& type : {utf8_view(), binary_view(), dictionary(int8(), utf8()), list(field("item", int32())),
                           struct_({field("a", int32())}), fixed_size_binary(0)}) {
    EXPECT_FALSE(IsGatherable(*type)) << type->ToString();
    auto n = MakeArrayOfNull(type, 2, pool(), "x");
    EXPECT_TRUE(n.status().IsNotImplemented()) << type->ToString();
  }
}

TEST_F(TakeTest, OutOfMemoryFromThePool) {
  auto values = Int32Array(pool(), {1, 2, 3});
  MemoryPoolOptions tiny;
  tiny.name = "tiny";
  tiny.limit_bytes = 1;
  auto small = pool_->MakeChild(tiny);
  auto r = Take(*values, std::vector<int64_t>{0, 1, 2, -1}, small.get(), "col");
  EXPECT_TRUE(r.status().IsOutOfMemory()) << r.status().ToString();
}

TEST_F(TakeTest, MakeArrayOfNullEveryType) {
  const std::vector<DataTypePtr> types = {null(),
                                          boolean(),
                                          int8(),
                                          int64(),
                                          float64(),
                                          decimal(128, 10, 1),
                                          timestamp(TimeUnit::kNano),
                                          fixed_size_binary(5),
                                          binary(),
                                          utf8(),
                                          large_binary(),
                                          large_utf8(),
                                          interval_month_day_nano()};
  for (const auto& type : types) {
    SCOPED_TRACE(type->ToString());
    for (int64_t n : {0, 1, 9}) {
      auto r = MakeArrayOfNull(type, n, pool(), "col");
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      const ArrayData& a = **r;
      EXPECT_TRUE(a.type->Equals(*type));
      EXPECT_EQ(a.length, n);
      EXPECT_EQ(a.null_count, n);
      for (int64_t i = 0; i < n; ++i) EXPECT_FALSE(a.IsValid(i));
      Status v = ValidateArray(a, ValidationLevel::kFull, "nulls");
      EXPECT_TRUE(v.ok()) << v.ToString();
      // The same as Take with only negative indices, from an empty array.
      if (type->id != TypeId::kNull) {
        auto empty = MakeArrayOfNull(type, 0, pool(), "col");
        ASSERT_TRUE(empty.ok());
        auto t = Take(**empty, std::vector<int64_t>(static_cast<size_t>(n), -1), pool(), "col");
        ASSERT_TRUE(t.ok()) << t.status().ToString();
        EXPECT_TRUE(CompareArrays(**t, a, CompareOptions{}, "col").ok());
      }
    }
  }
}

TEST_F(TakeTest, MakeArrayOfNullNegativeLength) {
  auto r = MakeArrayOfNull(int32(), -1, pool(), "col");
  EXPECT_TRUE(r.status().IsInvalid());
}

TEST_F(TakeTest, InterleaveGathersFromSeveralArraysInRowOrder) {
  auto check = [&](std::vector<ArrayDataPtr> arrays, const std::vector<SourceRow>& rows, const ArrayDataPtr& want) {
    std::vector<const ArrayData*> sources;
    for (const auto& a : arrays) sources.push_back(a.get());
    auto r = Interleave(sources, rows, pool(), "col");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)->offset, 0);
    Status v = ValidateArray(**r, ValidationLevel::kFull, "interleaved");
    EXPECT_TRUE(v.ok()) << v.ToString();
    ExpectEqual(want, *r);
    EXPECT_EQ((*r)->null_count, want->null_count);
  };
  // Integers: one source with nulls and a slice, one without.
  auto a = Slice(Int32Array(pool(), {9, 1, std::nullopt, 3}), 1, 3);  // [1, null, 3]
  auto b = Int32Array(pool(), {10, 20});
  check({a, b}, {{1, 1}, {0, 0}, {0, 1}, {1, 0}, {0, 2}}, Int32Array(pool(), {20, 1, std::nullopt, 10, 3}));
  // No nulls taken: no bitmap.
  {
    std::vector<const ArrayData*> sources = {a.get(), b.get()};
    std::vector<SourceRow> rows = {{0, 2}, {1, 1}};
    auto r = Interleave(sources, rows, pool(), "col");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ((*r)->null_count, 0);
    EXPECT_EQ((*r)->buffers[0], nullptr);
  }
  // Strings, 32- and 64-bit offsets, sliced.
  auto s1 = Slice(StringArray<int32_t>(pool(), {"zz", "a", std::nullopt, "ccc"}), 1, 3);
  auto s2 = StringArray<int32_t>(pool(), {"", "dddd"});
  check({s1, s2}, {{1, 1}, {0, 2}, {0, 1}, {1, 0}, {0, 0}},
        StringArray<int32_t>(pool(), {"dddd", "ccc", std::nullopt, "", "a"}));
  auto l1 = StringArray<int64_t>(pool(), {"x", "yy"});
  auto l2 = StringArray<int64_t>(pool(), {std::nullopt, "w"});
  check({l1, l2, l1}, {{2, 1}, {1, 1}, {1, 0}, {0, 0}}, StringArray<int64_t>(pool(), {"yy", "w", std::nullopt, "x"}));
  // Booleans.
  auto t1 = Slice(BoolArray(pool(), {false, true, false}), 1, 2);  // [t, f]
  auto t2 = BoolArray(pool(), {std::nullopt, true});
  check({t1, t2}, {{1, 1}, {0, 1}, {1, 0}, {0, 0}}, BoolArray(pool(), {true, false, std::nullopt, true}));
  // Empty output.
  check({b}, {}, Int32Array(pool(), {}));
}

TEST_F(TakeTest, InterleaveRejectsBadRowsAndMixedTypes) {
  auto a = Int32Array(pool(), {1, 2});
  auto s = StringArray<int32_t>(pool(), {"x"});
  const int64_t before = pool()->held_bytes();
  std::vector<const ArrayData*> sources = {a.get()};
  for (const SourceRow& bad : {SourceRow{1, 0}, SourceRow{-1, 0}, SourceRow{0, 2}, SourceRow{0, -1}}) {
    std::vector<SourceRow> rows = {{0, 0}, bad};
    auto r = Interleave(sources, rows, pool(), "col 'k'");
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.status().IsInvalid());
    EXPECT_NE(r.status().message().find("col 'k': row " + std::to_string(bad.row) + " of array " +
                                        std::to_string(bad.source) + " at position 1"),
              std::string::npos)
        << r.status().ToString();
  }
  std::vector<const ArrayData*> mixed = {a.get(), s.get()};
  auto r = Interleave(mixed, std::vector<SourceRow>{{0, 0}}, pool(), "col");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("array 1 has type"), std::string::npos) << r.status().ToString();
  auto none = Interleave(std::span<const ArrayData* const>{}, std::vector<SourceRow>{}, pool(), "col");
  EXPECT_TRUE(none.status().IsInvalid());
  EXPECT_EQ(pool()->held_bytes(), before);
}

}  // namespace
}  // namespace quiver
