// Tests of ValidateArray / ValidateBatch: every class of corruption is
// caught at the documented level with a message naming the place, and valid
// arrays pass.
#include <gtest/gtest.h>

#include "quiver/columnar/validate.h"
#include "quiver/testing/array_builders.h"
#include "quiver/testing/array_readers.h"
#include "quiver/testing/status_assertions.h"

namespace quiver {
namespace {

using namespace quiver::testing;  // NOLINT

class ValidateTest : public ::testing::Test {
 protected:
  MemoryPool* pool() { return pool_.get(); }

  static std::shared_ptr<ArrayData> Mutable(const ArrayDataPtr& a) { return std::make_shared<ArrayData>(*a); }

  static void ExpectValid(const ArrayDataPtr& a) {
    Status st = ValidateArray(*a, ValidationLevel::kFull, "a");
    EXPECT_OK(st);
  }

  /// Invalid at `level` with `fragment` in the message.
  static void ExpectInvalid(const ArrayDataPtr& a, ValidationLevel level, const std::string& fragment) {
    Status st = ValidateArray(*a, level, "a");
    EXPECT_TRUE(st.IsInvalid()) << "expected Invalid containing '" << fragment << "', got " << st.ToString();
    EXPECT_NE(st.message().find(fragment), std::string::npos) << st.ToString();
  }

  /// Passes structural checks, fails full ones with `fragment`.
  static void ExpectFullOnly(const ArrayDataPtr& a, const std::string& fragment) {
    Status st = ValidateArray(*a, ValidationLevel::kStructural, "a");
    EXPECT_OK(st);
    ExpectInvalid(a, ValidationLevel::kFull, fragment);
  }

  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

TEST_F(ValidateTest, AcceptsValidArrays) {
  ExpectValid(Int32Array(pool(), {1, std::nullopt, 3}));
  ExpectValid(BoolArray(pool(), {true, std::nullopt, false}));
  ExpectValid(StringArray(pool(), {"a", std::nullopt, "", "dd"}));
  ExpectValid(StringArray<int64_t>(pool(), {"a", std::nullopt}));
  ExpectValid(MakeArray(null(), 4, {}, {}, 4));
  ExpectValid(MakeArray(int32(), 0, {nullptr, nullptr}));
  ExpectValid(MakeArray(utf8(), 0, {nullptr, nullptr, nullptr}));
  ExpectValid(ListArray(pool(), Int32Array(pool(), {1, 2, 3}), {0, 1, 1, 3}, {true, false, true}));
  auto sliced = SliceArray(StringArray(pool(), {"a", "b", std::nullopt, "d"}), 1, 2);
  ASSERT_OK(sliced);
  ExpectValid(*sliced);
  ExpectValid(MakeArray(fixed_size_binary(3), 2, {nullptr, BytesOf(pool(), "abcdef")}));
  ExpectValid(MakeArray(decimal(128, 10, 2), 1, {nullptr, BytesOf(pool(), std::string(16, '\0'))}));
  ExpectValid(MakeArray(interval_month_day_nano(), 1, {nullptr, BytesOf(pool(), std::string(16, 'x'))}));
}

TEST_F(ValidateTest, LevelNoneAcceptsAnything) {
  auto a = Mutable(Int32Array(pool(), {1, 2}));
  a->length = -5;
  EXPECT_OK(ValidateArray(*a, ValidationLevel::kNone, "a"));
}

TEST_F(ValidateTest, RejectsBadLengthsAndCounts) {
  auto a = Mutable(Int32Array(pool(), {1, 2}));
  a->length = -1;
  ExpectInvalid(a, ValidationLevel::kStructural, "length -1 is negative");
  a = Mutable(Int32Array(pool(), {1, 2}));
  a->offset = -1;
  ExpectInvalid(a, ValidationLevel::kStructural, "offset -1 is negative");
  a = Mutable(Int32Array(pool(), {1, 2}));
  a->offset = INT64_MAX;
  ExpectInvalid(a, ValidationLevel::kStructural, "overflows");
  a = Mutable(Int32Array(pool(), {1, 2}));
  a->null_count = 3;
  ExpectInvalid(a, ValidationLevel::kStructural, "null_count 3 is outside [0, length 2]");
  a = Mutable(Int32Array(pool(), {1, 2}));
  a->type = nullptr;
  ExpectInvalid(a, ValidationLevel::kStructural, "no type");
}

TEST_F(ValidateTest, RejectsWrongBufferCount) {
  auto a = Mutable(Int32Array(pool(), {1, 2}));
  a->buffers.pop_back();
  ExpectInvalid(a, ValidationLevel::kStructural, "has 1 buffers, expected 2 for int32");
  auto n = Mutable(MakeArray(null(), 2, {nullptr}, {}, 2));
  ExpectInvalid(n, ValidationLevel::kStructural, "has 1 buffers, expected 0");
}

TEST_F(ValidateTest, ValidityBitmapChecks) {
  auto a = Mutable(Int32Array(pool(), {1, std::nullopt, 3}));
  a->buffers[0] = nullptr;
  ExpectInvalid(a, ValidationLevel::kStructural, "buffer 0 (validity): absent, but null_count is 1");

  // 9 values need 2 bitmap bytes.
  a = Mutable(Int32Array(pool(), {1, std::nullopt, 3, 4, 5, 6, 7, 8, 9}));
  a->buffers[0] = BytesOf(pool(), "\x01");
  ExpectInvalid(a, ValidationLevel::kStructural, "column 'a' buffer 0 (validity): size 1 bytes, expected at least 2");

  // Wrong null_count: only a full check counts the bits.
  a = Mutable(Int32Array(pool(), {1, std::nullopt, 3}));
  a->null_count = 2;
  ExpectFullOnly(a, "bitmap has 1 nulls, null_count says 2");

  auto n = Mutable(MakeArray(null(), 3, {}, {}, 1));
  ExpectInvalid(n, ValidationLevel::kStructural, "null array null_count 1 != length 3");
}

TEST_F(ValidateTest, FixedWidthDataTooSmall) {
  auto a = Mutable(Int32Array(pool(), {1, 2, 3}));
  a->buffers[1] = BufferOf<int32_t>(pool(), {1, 2});
  ExpectInvalid(a, ValidationLevel::kStructural, "column 'a' buffer 1 (data): size 8 bytes, expected at least 12");
  // Offset counts too.
  auto s = Mutable(Int32Array(pool(), {1, 2, 3}));
  s->offset = 1;
  ExpectInvalid(s, ValidationLevel::kStructural, "expected at least 16");
  auto b = Mutable(BoolArray(pool(), {true, false}));
  b->length = 9;
  ExpectInvalid(b, ValidationLevel::kStructural, "buffer 1 (data): size 1 bytes, expected at least 2");
  auto fsb = MakeArray(fixed_size_binary(4), 2, {nullptr, BytesOf(pool(), "abcdefg")});
  ExpectInvalid(fsb, ValidationLevel::kStructural, "expected at least 8");
  auto dec = MakeArray(decimal(100, 10, 2), 0, {nullptr, nullptr});
  ExpectInvalid(dec, ValidationLevel::kStructural, "decimal bit width 100");
}

TEST_F(ValidateTest, BinaryOffsetsChecks) {
  auto a = Mutable(StringArray(pool(), {"ab", "c", "def"}));
  a->buffers[1] = BufferOf<int32_t>(pool(), {0, 2, 3});
  ExpectInvalid(a, ValidationLevel::kStructural, "buffer 1 (offsets): size 12 bytes, expected at least 16");

  a = Mutable(StringArray(pool(), {"ab", "c", "def"}));
  a->buffers[1] = BufferOf<int32_t>(pool(), {0, 2, 3, 9});
  ExpectInvalid(a, ValidationLevel::kStructural,
                "column 'a' buffer 1 (offsets): offset 9 at index 3 is past the data buffer end 6");

  a = Mutable(StringArray(pool(), {"ab", "c", "def"}));
  a->buffers[1] = BufferOf<int32_t>(pool(), {-1, 2, 3, 6});
  ExpectInvalid(a, ValidationLevel::kStructural, "offset -1 at index 0 is negative");

  a = Mutable(StringArray(pool(), {"ab", "c", "def"}));
  a->buffers[1] = BufferOf<int32_t>(pool(), {0, 4, 3, 6});
  ExpectFullOnly(a, "offset 3 at index 2 is less than the previous offset 4");

  a = Mutable(StringArray(pool(), {"ab", "c", "def"}));
  a->buffers[1] = BufferOf<int32_t>(pool(), {0, 57, 3, 6});
  ExpectFullOnly(a, "offset 57 at index 1 is past the data buffer end 6");

  auto large = Mutable(StringArray<int64_t>(pool(), {"ab", "c"}));
  large->buffers[1] = BufferOf<int64_t>(pool(), {0, 5, 3});
  ExpectFullOnly(large, "offset 5 at index 1 is past the data buffer end 3");
  large->buffers[1] = BufferOf<int64_t>(pool(), {0, 2, 1});
  ExpectFullOnly(large, "offset 1 at index 2 is less than the previous offset 2");
}

TEST_F(ValidateTest, NestedErrorsNameTheFieldPath) {
  // list<item: utf8> whose strings have a bad middle offset.
  auto strings = Mutable(StringArray(pool(), {"aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc", "dddddddddd"}));
  strings->buffers[1] = BufferOf<int32_t>(pool(), {0, 10, 20, 57, 40});
  auto list_array = ListArray(pool(), strings, {0, 2, 4});
  ExpectFullOnly(list_array,
                 "column 'a.item' buffer 1 (offsets): offset 57 at index 3 is past the data buffer "
                 "end 40");

  auto type = struct_({field("x", int32()), field("y", list(field("item", int32())))});
  auto bad_child = ListArray(pool(), Int32Array(pool(), {1, 2}), {0, 1, 3});
  auto s = MakeArray(type, 2, {nullptr}, {Int32Array(pool(), {1, 2}), bad_child});
  ExpectInvalid(s, ValidationLevel::kStructural,
                "column 'a.y' buffer 1 (offsets): offset 3 at index 2 is past the child end 2");
}

TEST_F(ValidateTest, ListChecks) {
  auto a = ListArray(pool(), Int32Array(pool(), {1, 2, 3}), {0, 2, 1, 3});
  ExpectFullOnly(a, "offset 1 at index 2 is less than the previous offset 2");
  auto wrong_child_type = Mutable(ListArray(pool(), Int32Array(pool(), {1}), {0, 1}));
  wrong_child_type->children[0] = StringArray(pool(), {"x"});
  ExpectInvalid(wrong_child_type, ValidationLevel::kStructural,
                "column 'a.item': child type utf8 does not match the field type int32");
  auto no_child = Mutable(ListArray(pool(), Int32Array(pool(), {1}), {0, 1}));
  no_child->children.clear();
  ExpectInvalid(no_child, ValidationLevel::kStructural, "has 0 children, expected 1");
}

TEST_F(ValidateTest, ListViewChecks) {
  auto type = list_view(field("item", int32()));
  auto child = Int32Array(pool(), {1, 2, 3, 4});
  ExpectValid(
      MakeArray(type, 2, {nullptr, BufferOf<int32_t>(pool(), {2, 0}), BufferOf<int32_t>(pool(), {2, 3})}, {child}));
  ExpectFullOnly(
      MakeArray(type, 2, {nullptr, BufferOf<int32_t>(pool(), {2, 0}), BufferOf<int32_t>(pool(), {3, 1})}, {child}),
      "offset 2 + size 3 at index 0 is past the child end 4");
  ExpectFullOnly(
      MakeArray(type, 1, {nullptr, BufferOf<int32_t>(pool(), {0}), BufferOf<int32_t>(pool(), {-1})}, {child}),
      "buffer 2 (sizes): size -1 at index 0 is negative");
  ExpectInvalid(
      MakeArray(type, 2, {nullptr, BufferOf<int32_t>(pool(), {0, 0}), BufferOf<int32_t>(pool(), {1})}, {child}),
      ValidationLevel::kStructural, "buffer 2 (sizes): size 4 bytes, expected at least 8");
  auto large = large_list_view(field("item", int32()));
  ExpectFullOnly(
      MakeArray(large, 1, {nullptr, BufferOf<int64_t>(pool(), {-2}), BufferOf<int64_t>(pool(), {1})}, {child}),
      "offset -2 at index 0 is negative");
}

TEST_F(ValidateTest, FixedSizeListAndStructChildLengths) {
  auto fsl = MakeArray(fixed_size_list(field("item", int32()), 3), 2, {nullptr}, {Int32Array(pool(), {1, 2, 3, 4, 5})});
  ExpectInvalid(fsl, ValidationLevel::kStructural,
                "column 'a.item': child length 5 is less than the parent's (offset + length) * "
                "list_size 6");
  auto type = struct_({field("x", int32()), field("y", utf8())});
  auto st = MakeArray(type, 3, {nullptr}, {Int32Array(pool(), {1, 2, 3}), StringArray(pool(), {"a", "b"})});
  ExpectInvalid(st, ValidationLevel::kStructural,
                "column 'a.y': child length 2 is less than the parent's offset + length 3");
  auto ok = MakeArray(type, 2, {nullptr}, {Int32Array(pool(), {1, 2, 3}), StringArray(pool(), {"a", "b"})});
  ExpectValid(ok);
}

TEST_F(ValidateTest, UnionChecks) {
  auto sparse = sparse_union({field("i", int32()), field("s", utf8())}, {2, 5});
  auto children = std::vector<ArrayDataPtr>{Int32Array(pool(), {1, 2, 3}), StringArray(pool(), {"a", "b", "c"})};
  ExpectValid(MakeArray(sparse, 3, {BufferOf<int8_t>(pool(), {2, 5, 2})}, children));
  ExpectFullOnly(MakeArray(sparse, 3, {BufferOf<int8_t>(pool(), {2, 3, 2})}, children),
                 "buffer 0 (type ids): type id 3 at index 1 is not a declared type code");
  ExpectInvalid(MakeArray(sparse, 3, {BufferOf<int8_t>(pool(), {2, 5})}, children), ValidationLevel::kStructural,
                "buffer 0 (type ids): size 2 bytes, expected at least 3");
  ExpectInvalid(MakeArray(sparse, 3, {BufferOf<int8_t>(pool(), {2, 5, 2})}, children, 1), ValidationLevel::kStructural,
                "null_count 1 must be 0");

  auto dense = dense_union({field("i", int32()), field("s", utf8())}, {0, 1});
  auto dchildren = std::vector<ArrayDataPtr>{Int32Array(pool(), {10, 11}), StringArray(pool(), {"x"})};
  ExpectValid(
      MakeArray(dense, 3, {BufferOf<int8_t>(pool(), {0, 1, 0}), BufferOf<int32_t>(pool(), {0, 0, 1})}, dchildren));
  ExpectFullOnly(
      MakeArray(dense, 3, {BufferOf<int8_t>(pool(), {0, 1, 0}), BufferOf<int32_t>(pool(), {0, 1, 1})}, dchildren),
      "buffer 1 (offsets): offset 1 at index 1 is outside child 's' of length 1");
  ExpectFullOnly(MakeArray(dense, 1, {BufferOf<int8_t>(pool(), {0}), BufferOf<int32_t>(pool(), {-1})}, dchildren),
                 "offset -1 at index 0 is outside child 'i'");
  ExpectInvalid(MakeArray(dense_union({field("i", int32())}, {0, 1}), 0, {nullptr, nullptr}, {Int32Array(pool(), {})}),
                ValidationLevel::kStructural, "union has 2 type codes for 1 children");
}

TEST_F(ValidateTest, DictionaryChecks) {
  auto dict = StringArray(pool(), {"red", "green", "blue"});
  auto make = [&](DataTypePtr index_type, std::shared_ptr<Buffer> indices, int64_t length,
                  std::shared_ptr<Buffer> bitmap = nullptr, int64_t nulls = 0) {
    auto a = Mutable(MakeArray(dictionary(index_type, utf8()), length, {bitmap, indices}, {}, nulls));
    a->dictionary = dict;
    return a;
  };
  ExpectValid(make(int8(), BufferOf<int8_t>(pool(), {0, 2, 1}), 3));
  ExpectFullOnly(make(int8(), BufferOf<int8_t>(pool(), {0, 3, 1}), 3),
                 "column 'a' buffer 1 (indices): index 3 at index 1 is outside the dictionary of "
                 "length 3");
  ExpectFullOnly(make(int16(), BufferOf<int16_t>(pool(), {0, -1}), 2), "index -1 at index 1");
  ExpectFullOnly(make(uint32(), BufferOf<uint32_t>(pool(), {0, 4000000000u}), 2), "index 4000000000 at index 1");
  ExpectFullOnly(make(uint64(), BufferOf<uint64_t>(pool(), {UINT64_MAX}), 1), "is outside the dictionary");
  ExpectFullOnly(make(int64(), BufferOf<int64_t>(pool(), {0, 1, 7}), 3), "index 7 at index 2");
  // Null slots may hold any index.
  int64_t nulls = 0;
  auto bitmap = BitmapOf(pool(), {true, false, true}, &nulls);
  ExpectValid(make(uint8(), BufferOf<uint8_t>(pool(), {0, 200, 2}), 3, bitmap, nulls));

  auto missing = make(int8(), BufferOf<int8_t>(pool(), {0}), 1);
  missing->dictionary = nullptr;
  ExpectInvalid(missing, ValidationLevel::kStructural, "has no dictionary");
  auto wrong = make(int8(), BufferOf<int8_t>(pool(), {0}), 1);
  wrong->dictionary = Int32Array(pool(), {1});
  ExpectInvalid(wrong, ValidationLevel::kStructural,
                "column 'a.dictionary': dictionary type int32 does not match the value type utf8");
  auto bad_dict = Mutable(dict);
  bad_dict->buffers[1] = BufferOf<int32_t>(pool(), {0, 3, 8, 99});
  auto with_bad_dict = make(int8(), BufferOf<int8_t>(pool(), {0}), 1);
  with_bad_dict->dictionary = bad_dict;
  ExpectInvalid(with_bad_dict, ValidationLevel::kStructural, "column 'a.dictionary' buffer 1");
  ExpectInvalid(MakeArray(dictionary(utf8(), utf8()), 0, {nullptr, nullptr}), ValidationLevel::kStructural,
                "index type utf8 is not an integer type");
}

TEST_F(ValidateTest, RunEndEncodedChecks) {
  auto type = run_end_encoded(field("run_ends", int32(), false), field("values", utf8()));
  auto values = StringArray(pool(), {"a", "b", "c"});
  ExpectValid(MakeArray(type, 9, {}, {Int32Array(pool(), {3, 5, 9}), values}));
  ExpectInvalid(MakeArray(type, 10, {}, {Int32Array(pool(), {3, 5, 9}), values}), ValidationLevel::kStructural,
                "column 'a.run_ends' buffer 1 (data): last run end 9 is less than offset + length 10");
  ExpectFullOnly(MakeArray(type, 9, {}, {Int32Array(pool(), {3, 3, 9}), values}),
                 "run end 3 at index 1 is not greater than the previous run end 3");
  ExpectFullOnly(MakeArray(type, 9, {}, {Int32Array(pool(), {0, 5, 9}), values}),
                 "run end 0 at index 0 is not positive");
  ExpectInvalid(MakeArray(type, 9, {}, {Int32Array(pool(), {3, 5, 9}), StringArray(pool(), {"a"})}),
                ValidationLevel::kStructural, "values length 1 is less than the run ends length 3");
  ExpectInvalid(MakeArray(type, 9, {}, {Int32Array(pool(), {3, std::nullopt, 9}), values}),
                ValidationLevel::kStructural, "run ends have 1 nulls");
  ExpectInvalid(MakeArray(type, 2, {}, {Int32Array(pool(), {}), StringArray(pool(), {})}), ValidationLevel::kStructural,
                "no run ends");
  auto type16 = run_end_encoded(field("run_ends", int16(), false), field("values", int32()));
  ExpectFullOnly(
      MakeArray(type16, 4, {}, {PrimitiveArray<int16_t>(pool(), int16(), {4, 2, 4}), Int32Array(pool(), {1, 2, 3})}),
      "run end 2 at index 1 is not greater");
  auto type64 = run_end_encoded(field("run_ends", int64(), false), field("values", int32()));
  ExpectFullOnly(
      MakeArray(type64, 4, {}, {PrimitiveArray<int64_t>(pool(), int64(), {-1, 4}), Int32Array(pool(), {1, 2})}),
      "run end -1 at index 0 is not positive");
  ExpectInvalid(MakeArray(run_end_encoded(field("r", int8(), false), field("v", int32())), 0, {},
                          {PrimitiveArray<int8_t>(pool(), int8(), {}), Int32Array(pool(), {})}),
                ValidationLevel::kStructural, "run ends type int8 is not int16, int32 or int64");
  // A slice of an REE array is valid; one past its run ends is not.
  auto a = MakeArray(type, 9, {}, {Int32Array(pool(), {3, 5, 9}), values});
  auto s = SliceArray(a, 4, 5);
  ASSERT_OK(s);
  ExpectValid(*s);
}

TEST_F(ValidateTest, ViewChecks) {
  const std::string long_value = "0123456789abcdef";  // 16 bytes
  auto view_of = [](int32_t size, int32_t index, int32_t offset) {
    std::vector<uint8_t> v(16, 0);
    std::memcpy(&v[0], &size, 4);
    std::memcpy(&v[8], &index, 4);
    std::memcpy(&v[12], &offset, 4);
    return v;
  };
  auto make = [&](std::vector<uint8_t> views, int64_t length) {
    return MakeArray(utf8_view(), length, {nullptr, BufferOf(pool(), views), BytesOf(pool(), long_value)});
  };
  ExpectValid(make(view_of(16, 0, 0), 1));
  ExpectValid(make(view_of(5, 99, 99), 1));  // inline: index and offset are data bytes
  ExpectFullOnly(make(view_of(16, 1, 0), 1),
                 "buffer 1 (views): view at index 0 refers to data buffer 1, but there are 1");
  ExpectFullOnly(make(view_of(14, 0, 3), 1),
                 "view at index 0 (offset 3, length 14) is past the end 16 of data buffer 0");
  ExpectFullOnly(make(view_of(-3, 0, 0), 1), "view at index 0 has negative length -3");
  ExpectInvalid(make(view_of(1, 0, 0), 2), ValidationLevel::kStructural,
                "buffer 1 (views): size 16 bytes, expected at least 32");
  auto too_few = MakeArray(binary_view(), 0, {nullptr});
  ExpectInvalid(too_few, ValidationLevel::kStructural, "expected at least 2");
}

TEST_F(ValidateTest, MapChecks) {
  auto entries_type = struct_({field("key", utf8(), false), field("value", int32())});
  auto type = map(field("entries", entries_type, false));
  auto entries =
      MakeArray(entries_type, 3, {nullptr}, {StringArray(pool(), {"a", "b", "c"}), Int32Array(pool(), {1, 2, 3})});
  auto ok = MakeArray(type, 2, {nullptr, BufferOf<int32_t>(pool(), {0, 1, 3})}, {entries});
  ExpectValid(ok);
  auto null_keys = MakeArray(entries_type, 3, {nullptr},
                             {StringArray(pool(), {"a", std::nullopt, "c"}), Int32Array(pool(), {1, 2, 3})});
  ExpectInvalid(MakeArray(type, 2, {nullptr, BufferOf<int32_t>(pool(), {0, 1, 3})}, {null_keys}),
                ValidationLevel::kStructural, "column 'a.entries.key': map keys have 1 nulls");
}

TEST_F(ValidateTest, ValidateBatchNamesTheColumn) {
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("id", int32()), field("name", utf8())};
  RecordBatch batch;
  batch.schema = schema;
  batch.num_rows = 2;
  auto bad = Mutable(StringArray(pool(), {"x", "y"}));
  bad->buffers[1] = BufferOf<int32_t>(pool(), {0, 5, 2});
  batch.columns = {Int32Array(pool(), {1, 2}), bad};
  Status st = ValidateBatch(batch, ValidationLevel::kFull);
  EXPECT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("column 'name' buffer 1 (offsets): offset 5 at index 1"), std::string::npos)
      << st.ToString();
  EXPECT_OK(ValidateBatch(batch, ValidationLevel::kStructural));
  batch.num_rows = 3;
  EXPECT_TRUE(ValidateBatch(batch, ValidationLevel::kStructural).IsInvalid());
}

TEST_F(ValidateTest, DeepNestingIsRejectedNotRecursedForever) {
  ArrayDataPtr a = Int32Array(pool(), {1});
  for (int i = 0; i < 300; ++i) a = ListArray(pool(), a, {0, 1});
  ExpectInvalid(a, ValidationLevel::kStructural, "nesting deeper than 256 levels");
}

}  // namespace
}  // namespace quiver

namespace quiver {
namespace {

using namespace quiver::testing;  // NOLINT

void CollectBuffers(const ArrayData& a, std::vector<Buffer*>* out) {
  for (const auto& b : a.buffers) {
    if (b && b->is_mutable()) out->push_back(b.get());
  }
  for (const auto& c : a.children) CollectBuffers(*c, out);
  if (a.dictionary) CollectBuffers(*a.dictionary, out);
}

// Byte mutations of every buffer: whatever full validation accepts must be
// safe to compact, re-validate and read (run under ASan/UBSan in CI).
TEST(ValidateMutationTest, AcceptedMutantsAreSafeToUse) {
  auto pool = MemoryPool::MakeRoot();
  MemoryPool* p = pool.get();
  std::vector<ArrayDataPtr> arrays;
  auto strings = StringArray(p, {"ab", std::nullopt, "cde", "", "fghij"});
  arrays.push_back(ListArray(p, strings, {0, 2, 2, 5}, {true, false, true}));
  arrays.push_back(MakeArray(run_end_encoded(field("run_ends", int32(), false), field("v", utf8())), 6, {},
                             {Int32Array(p, {2, 3, 6}), StringArray(p, {"a", "b", "c"})}));
  arrays.push_back(MakeArray(dense_union({field("i", int32()), field("s", utf8())}, {0, 1}), 3,
                             {BufferOf<int8_t>(p, {0, 1, 0}), BufferOf<int32_t>(p, {0, 0, 1})},
                             {Int32Array(p, {10, 11}), StringArray(p, {"x"})}));
  arrays.push_back(MakeArray(list_view(field("item", int32())), 2,
                             {nullptr, BufferOf<int32_t>(p, {1, 0}), BufferOf<int32_t>(p, {2, 1})},
                             {Int32Array(p, {1, 2, 3})}));
  auto dict_array =
      std::const_pointer_cast<ArrayData>(PrimitiveArray<int16_t>(p, dictionary(int16(), utf8()), {1, std::nullopt, 0}));
  dict_array->dictionary = StringArray(p, {"p", "q"});
  arrays.push_back(dict_array);
  for (const auto& original : arrays) {
    auto sliced = SliceArray(original, 1, original->length - 1);
    ASSERT_OK(sliced);
    for (const ArrayDataPtr& a : {original, *sliced}) {
      ASSERT_OK(ValidateArray(*a, ValidationLevel::kFull, "a")) << a->type->ToString();
      std::vector<Buffer*> buffers;
      CollectBuffers(*a, &buffers);
      for (Buffer* b : buffers) {
        for (int64_t i = 0; i < b->size(); ++i) {
          const uint8_t saved = b->data()[i];
          for (uint8_t v : {uint8_t{0x00}, uint8_t{0x80}, uint8_t{0xFF}, uint8_t(saved + 1)}) {
            b->mutable_data()[i] = v;
            if (ValidateArray(*a, ValidationLevel::kFull, "a").ok()) {
              auto c = CompactArray(a, p);
              ASSERT_OK(c);
              ASSERT_OK(ValidateArray(**c, ValidationLevel::kFull, "c"));
              EXPECT_EQ(Render(**c), Render(*a));
            }
          }
          b->mutable_data()[i] = saved;
        }
      }
    }
  }
}

}  // namespace
}  // namespace quiver
