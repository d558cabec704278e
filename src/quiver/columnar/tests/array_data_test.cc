// Tests of ArrayData lookups, SliceArray, CompactArray and record batches.
#include <gtest/gtest.h>

#include "quiver/columnar/array_data.h"
#include "quiver/columnar/validate.h"
#include "quiver/testing/array_builders.h"
#include "quiver/testing/array_readers.h"
#include "quiver/testing/status_assertions.h"

namespace quiver {
namespace {

using namespace quiver::testing;  // NOLINT

class ArrayDataTest : public ::testing::Test {
 protected:
  MemoryPool* pool() { return pool_.get(); }

  /// Slices, compacts, and checks the compacted array: offset 0, valid in
  /// full, same values as the slice. Returns the compacted array.
  ArrayDataPtr SliceAndCompact(const ArrayDataPtr& array, int64_t offset, int64_t length) {
    auto sliced = SliceArray(array, offset, length);
    EXPECT_OK(sliced);
    auto compacted = CompactArray(*sliced, pool());
    EXPECT_OK(compacted);
    const ArrayDataPtr& c = *compacted;
    EXPECT_EQ(c->offset, 0);
    EXPECT_EQ(c->length, length);
    EXPECT_EQ(c->null_count, (*sliced)->null_count);
    Status st = ValidateArray(*c, ValidationLevel::kFull, "compacted");
    EXPECT_OK(st);
    EXPECT_EQ(Render(*c), Render(**sliced));
    return c;
  }

  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

TEST_F(ArrayDataTest, IsValidAndTotalBufferBytes) {
  auto a = Int32Array(pool(), {1, std::nullopt, 3});
  EXPECT_TRUE(a->IsValid(0));
  EXPECT_FALSE(a->IsValid(1));
  EXPECT_TRUE(a->IsValid(2));
  EXPECT_EQ(a->TotalBufferBytes(), 1 + 12);
  auto no_nulls = Int32Array(pool(), {1, 2});
  EXPECT_TRUE(no_nulls->IsValid(1));
  auto nulls = MakeArray(null(), 3, {}, {}, 3);
  EXPECT_FALSE(nulls->IsValid(0));
  auto list_array = ListArray(pool(), Int32Array(pool(), {1, 2, 3}), {0, 1, 3});
  EXPECT_EQ(list_array->TotalBufferBytes(), 12 + 12);
}

TEST_F(ArrayDataTest, SliceRecomputesNullCount) {
  auto a = Int32Array(pool(), {1, std::nullopt, 3, std::nullopt, 5});
  ASSERT_EQ(a->null_count, 2);
  auto s = SliceArray(a, 2, 3);
  ASSERT_OK(s);
  EXPECT_EQ((*s)->offset, 2);
  EXPECT_EQ((*s)->length, 3);
  EXPECT_EQ((*s)->null_count, 1);
  EXPECT_EQ((*s)->buffers[1].get(), a->buffers[1].get());  // shared
  EXPECT_EQ(Render(**s), "3,null,5");
  // Slice of a slice.
  auto s2 = SliceArray(*s, 1, 1);
  ASSERT_OK(s2);
  EXPECT_EQ((*s2)->offset, 3);
  EXPECT_EQ((*s2)->null_count, 1);
  // Whole range returns the input.
  EXPECT_EQ(SliceArray(a, 0, 5)->get(), a.get());
}

TEST_F(ArrayDataTest, SliceRejectsOutOfRange) {
  auto a = Int32Array(pool(), {1, 2, 3});
  EXPECT_TRUE(SliceArray(a, 2, 2).status().IsInvalid());
  EXPECT_TRUE(SliceArray(a, -1, 1).status().IsInvalid());
  EXPECT_TRUE(SliceArray(a, 1, -1).status().IsInvalid());
  EXPECT_TRUE(SliceArray(a, INT64_MAX, 1).status().IsInvalid());
  EXPECT_OK(SliceArray(a, 3, 0));
}

TEST_F(ArrayDataTest, SliceNullCountRulesForLayoutsWithoutBitmap) {
  auto nulls = MakeArray(null(), 10, {}, {}, 10);
  auto s = SliceArray(nulls, 2, 5);
  ASSERT_OK(s);
  EXPECT_EQ((*s)->null_count, 5);
  auto u_type = sparse_union({field("a", int32())}, {0});
  auto u = MakeArray(u_type, 3, {BufferOf<int8_t>(pool(), {0, 0, 0})}, {Int32Array(pool(), {1, std::nullopt, 3})});
  auto su = SliceArray(u, 1, 2);
  ASSERT_OK(su);
  EXPECT_EQ((*su)->null_count, 0);
}

TEST_F(ArrayDataTest, CompactBoolAtOddOffsetsRepacksBitmaps) {
  std::vector<std::optional<bool>> values;
  for (int i = 0; i < 37; ++i) {
    if (i % 5 == 2) {
      values.push_back(std::nullopt);
    } else {
      values.push_back(i % 3 == 0);
    }
  }
  auto a = BoolArray(pool(), values);
  for (int64_t offset : {1, 3, 7, 8, 9, 15}) {
    for (int64_t length : {0, 1, 7, 13, 20}) {
      SCOPED_TRACE("offset " + std::to_string(offset) + " length " + std::to_string(length));
      auto c = SliceAndCompact(a, offset, length);
      EXPECT_EQ(c->buffers[1]->size(), bit_util::BytesForBits(length));
      if (c->buffers[0]) {
        EXPECT_EQ(c->buffers[0]->size(), bit_util::BytesForBits(length));
      }
      if (offset % 8 != 0 && length > 0) {
        // Re-packed into a fresh pool buffer, unused trailing bits zero.
        EXPECT_TRUE(c->buffers[1]->is_mutable());
        const int64_t tail = length % 8;
        if (tail != 0) {
          EXPECT_EQ(c->buffers[1]->data()[length / 8] >> tail, 0);
        }
      }
    }
  }
}

TEST_F(ArrayDataTest, CompactFixedWidthSlicesWithoutCopying) {
  auto a = Int32Array(pool(), {1, 2, std::nullopt, 4, 5, 6, 7, 8, 9, 10});
  const int64_t allocations_before = pool_->stats().num_allocations;
  auto c = SliceAndCompact(a, 8, 2);  // byte-aligned bitmap offset: no copy
  EXPECT_EQ(pool_->stats().num_allocations, allocations_before);
  EXPECT_EQ(c->buffers[1]->size(), 8);
  EXPECT_EQ(c->buffers[1]->data(), a->buffers[1]->data() + 32);
  EXPECT_EQ(c->buffers[0], nullptr);  // no nulls in range: bitmap dropped
  auto c2 = SliceAndCompact(a, 1, 3);
  EXPECT_EQ(c2->null_count, 1);
  ASSERT_NE(c2->buffers[0], nullptr);
  EXPECT_EQ(Render(*c2), "2,null,4");
}

TEST_F(ArrayDataTest, CompactReturnsInputWhenAlreadyCompact) {
  auto a = Int32Array(pool(), {1, std::nullopt, 3});
  auto c = CompactArray(a, pool());
  ASSERT_OK(c);
  EXPECT_EQ(c->get(), a.get());
  auto s = StringArray(pool(), {"x", "yy"});
  EXPECT_EQ(CompactArray(s, pool())->get(), s.get());
}

TEST_F(ArrayDataTest, CompactStringsRebasesOffsets) {
  auto a = StringArray(pool(), {"a", "bb", std::nullopt, "dddd", "e", "ff", ""});
  auto c = SliceAndCompact(a, 3, 3);
  EXPECT_EQ(Render(*c), "dddd,e,ff");
  EXPECT_EQ(c->buffers[1]->size(), 4 * 4);
  EXPECT_EQ(ValueAt<int32_t>(*c, 0), 0);
  EXPECT_EQ(c->buffers[2]->size(), 7);
  SliceAndCompact(a, 1, 2);
  SliceAndCompact(a, 0, 0);
  SliceAndCompact(a, 6, 1);
  auto large = StringArray<int64_t>(pool(), {"one", std::nullopt, "three", "four"});
  auto lc = SliceAndCompact(large, 1, 3);
  EXPECT_EQ(lc->buffers[2]->size(), 9);
}

TEST_F(ArrayDataTest, CompactListsTrimChild) {
  // [[1,2], [], [3,4,5], null, [6,7]]
  auto child = Int32Array(pool(), {1, 2, 3, 4, std::nullopt, 6, 7});
  auto a = ListArray(pool(), child, {0, 2, 2, 5, 5, 7}, {true, true, true, false, true});
  auto c = SliceAndCompact(a, 1, 3);
  EXPECT_EQ(Render(*c), "[],[3,4,null],null");
  EXPECT_EQ(c->children[0]->length, 3);
  EXPECT_EQ(c->children[0]->offset, 0);
  EXPECT_EQ(c->children[0]->null_count, 1);
  EXPECT_EQ(c->children[0]->buffers[1]->size(), 12);
  SliceAndCompact(a, 4, 1);
  // A list of lists of strings, sliced twice.
  auto strings = StringArray(pool(), {"a", "b", "c", "d", "e", "f"});
  auto inner = ListArray(pool(), strings, {0, 1, 3, 3, 6});
  auto outer = ListArray(pool(), inner, {0, 2, 4});
  auto oc = SliceAndCompact(outer, 1, 1);
  EXPECT_EQ(Render(*oc), "[[],[d,e,f]]");
  EXPECT_EQ(oc->children[0]->children[0]->buffers[2]->size(), 3);
}

TEST_F(ArrayDataTest, CompactStructSlicesChildren) {
  auto type = struct_({field("a", int32()), field("b", utf8())});
  auto ints = Int32Array(pool(), {1, 2, 3, 4, 5});
  auto strs = StringArray(pool(), {"v", "w", std::nullopt, "y", "z"});
  int64_t nulls = 0;
  auto bitmap = BitmapOf(pool(), {true, false, true, true, true}, &nulls);
  auto a = MakeArray(type, 5, {bitmap}, {ints, strs}, nulls);
  auto c = SliceAndCompact(a, 1, 3);
  EXPECT_EQ(Render(*c), "null,{a=3 b=null},{a=4 b=y}");
  EXPECT_EQ(c->children[0]->length, 3);
  EXPECT_EQ(c->children[1]->length, 3);
  EXPECT_EQ(c->children[1]->offset, 0);
}

TEST_F(ArrayDataTest, CompactFixedSizeList) {
  auto type = fixed_size_list(field("item", int32()), 2);
  auto a = MakeArray(type, 4, {nullptr}, {Int32Array(pool(), {1, 2, 3, 4, 5, 6, 7, 8})});
  auto c = SliceAndCompact(a, 1, 2);
  EXPECT_EQ(Render(*c), "[3,4],[5,6]");
  EXPECT_EQ(c->children[0]->length, 4);
}

TEST_F(ArrayDataTest, CompactListViewTrimsChild) {
  auto type = list_view(field("item", int32()));
  auto child = Int32Array(pool(), {1, 2, 3, 4, 5, 6});
  // [[5,6], [2,3], [], [1]]
  auto a = MakeArray(
      type, 4, {nullptr, BufferOf<int32_t>(pool(), {4, 1, 3, 0}), BufferOf<int32_t>(pool(), {2, 2, 0, 1})}, {child});
  auto c = SliceAndCompact(a, 1, 2);
  EXPECT_EQ(Render(*c), "[2,3],[]");
  EXPECT_EQ(c->children[0]->length, 2);
  SliceAndCompact(a, 0, 4);
}

TEST_F(ArrayDataTest, CompactSparseUnion) {
  auto type = sparse_union({field("i", int32()), field("s", utf8())}, {3, 7});
  auto a = MakeArray(type, 4, {BufferOf<int8_t>(pool(), {3, 7, 7, 3})},
                     {Int32Array(pool(), {1, 2, 3, 4}), StringArray(pool(), {"a", "b", "c", "d"})});
  auto c = SliceAndCompact(a, 1, 2);
  EXPECT_EQ(Render(*c), "s:b,s:c");
  EXPECT_EQ(c->buffers[0]->size(), 2);
  EXPECT_EQ(c->children[1]->length, 2);
}

TEST_F(ArrayDataTest, CompactDenseUnionRebasesOffsets) {
  auto type = dense_union({field("i", int32()), field("s", utf8())}, {0, 1});
  auto a = MakeArray(type, 5, {BufferOf<int8_t>(pool(), {0, 1, 0, 1, 0}), BufferOf<int32_t>(pool(), {0, 0, 1, 1, 2})},
                     {Int32Array(pool(), {10, 11, 12}), StringArray(pool(), {"x", "y"})});
  auto c = SliceAndCompact(a, 2, 3);
  EXPECT_EQ(Render(*c), "i:11,s:y,i:12");
  EXPECT_EQ(c->children[0]->length, 2);
  EXPECT_EQ(c->children[1]->length, 1);
  EXPECT_EQ(ValueAt<int32_t>(*c, 0), 0);
}

TEST_F(ArrayDataTest, CompactRunEndEncodedRebuildsRunEnds) {
  auto type = run_end_encoded(field("run_ends", int32(), false), field("values", utf8()));
  // a a a b b c c c c
  auto run_ends = Int32Array(pool(), {3, 5, 9});
  auto values = StringArray(pool(), {"a", "b", "c"});
  auto a = MakeArray(type, 9, {}, {run_ends, values});
  auto c = SliceAndCompact(a, 4, 4);
  EXPECT_EQ(Render(*c), "b,c,c,c");
  EXPECT_EQ(Render(*c->children[0]), "1,4");
  EXPECT_EQ(Render(*c->children[1]), "b,c");
  auto c2 = SliceAndCompact(a, 0, 3);
  EXPECT_EQ(Render(*c2->children[0]), "3");
  SliceAndCompact(a, 8, 1);
  SliceAndCompact(a, 5, 0);
  // int16 and int64 run ends.
  auto type16 = run_end_encoded(field("run_ends", int16(), false), field("values", int32()));
  auto a16 = MakeArray(type16, 6, {}, {PrimitiveArray<int16_t>(pool(), int16(), {2, 6}), Int32Array(pool(), {7, 8})});
  auto c16 = SliceAndCompact(a16, 1, 3);
  EXPECT_EQ(Render(*c16), "7,8,8");
  EXPECT_EQ(CompactArray(a, pool())->get(), a.get());
}

TEST_F(ArrayDataTest, CompactDictionaryKeepsDictionary) {
  auto dict = StringArray(pool(), {"red", "green"});
  auto a = std::const_pointer_cast<ArrayData>(
      PrimitiveArray<int8_t>(pool(), dictionary(int8(), utf8()), {1, 0, std::nullopt, 1}));
  a->dictionary = dict;
  auto c = SliceAndCompact(a, 1, 3);
  EXPECT_EQ(Render(*c), "red,null,green");
  EXPECT_EQ(c->dictionary.get(), dict.get());
  EXPECT_EQ(c->buffers[1]->size(), 3);
}

TEST_F(ArrayDataTest, CompactViewsSlicesViewsKeepsDataBuffers) {
  std::vector<uint8_t> views(3 * 16, 0);
  auto put_inline = [&](int i, const std::string& s) {
    int32_t n = static_cast<int32_t>(s.size());
    std::memcpy(&views[i * 16], &n, 4);
    std::memcpy(&views[i * 16 + 4], s.data(), s.size());
  };
  const std::string long_value = "a string longer than twelve";
  put_inline(0, "short");
  int32_t n = static_cast<int32_t>(long_value.size()), idx = 0, off = 0;
  std::memcpy(&views[16], &n, 4);
  std::memcpy(&views[16 + 4], long_value.data(), 4);
  std::memcpy(&views[16 + 8], &idx, 4);
  std::memcpy(&views[16 + 12], &off, 4);
  put_inline(2, "tiny");
  auto a = MakeArray(utf8_view(), 3, {nullptr, BufferOf(pool(), views), BytesOf(pool(), long_value)});
  auto c = SliceAndCompact(a, 1, 2);
  EXPECT_EQ(Render(*c), "a string longer than twelve,tiny");
  EXPECT_EQ(c->buffers.size(), 3u);
  EXPECT_EQ(c->buffers[1]->size(), 32);
}

TEST_F(ArrayDataTest, CompactNullArray) {
  auto a = MakeArray(null(), 10, {}, {}, 10);
  auto c = SliceAndCompact(a, 3, 4);
  EXPECT_EQ(c->null_count, 4);
}

TEST_F(ArrayDataTest, CompactRejectsMalformedArrays) {
  auto a = std::const_pointer_cast<ArrayData>(StringArray(pool(), {"a", "b"}));
  a->buffers[2] = BytesOf(pool(), "a");  // last offset 2 > data size 1
  auto c = CompactArray(a, pool());
  EXPECT_TRUE(c.status().IsInvalid());
  EXPECT_NE(c.status().message().find("past the data buffer end"), std::string::npos) << c.status().ToString();
}

TEST_F(ArrayDataTest, CompactPropagatesOutOfMemory) {
  auto small = MemoryPool::MakeRoot({.name = "tiny", .limit_bytes = 0});
  auto a = BoolArray(pool(), {true, false, true, true});
  auto s = SliceArray(a, 1, 3);
  ASSERT_OK(s);
  auto c = CompactArray(*s, small.get());
  EXPECT_TRUE(c.status().IsOutOfMemory()) << c.status().ToString();
}

TEST_F(ArrayDataTest, RecordBatchShapeAndSlice) {
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("a", int32()), field("b", utf8())};
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = 3;
  batch->columns = {Int32Array(pool(), {1, 2, 3}), StringArray(pool(), {"x", std::nullopt, "z"})};
  EXPECT_OK(batch->CheckShape());
  EXPECT_OK(ValidateBatch(*batch, ValidationLevel::kFull));

  auto sliced = SliceBatch(batch, 1, 2);
  ASSERT_OK(sliced);
  EXPECT_EQ((*sliced)->num_rows, 2);
  EXPECT_EQ(Render(*(*sliced)->columns[1]), "null,z");
  EXPECT_TRUE(SliceBatch(batch, 2, 2).status().IsInvalid());

  RecordBatch wrong_type = *batch;
  wrong_type.columns[0] = PrimitiveArray<int64_t>(pool(), int64(), {1, 2, 3});
  Status st = wrong_type.CheckShape();
  EXPECT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("array type int64 does not match the schema type int32"), std::string::npos)
      << st.ToString();
  RecordBatch wrong_length = *batch;
  wrong_length.num_rows = 4;
  EXPECT_TRUE(wrong_length.CheckShape().IsInvalid());
  RecordBatch wrong_count = *batch;
  wrong_count.columns.pop_back();
  EXPECT_TRUE(wrong_count.CheckShape().IsInvalid());
}

}  // namespace
}  // namespace quiver
