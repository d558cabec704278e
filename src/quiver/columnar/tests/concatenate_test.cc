// Direct tests for quiver/columnar/concatenate.h ConcatenateArrays: values,
// nulls and input offsets for each supported layout, and the documented
// errors (empty input, mismatched types, different dictionaries, layouts
// not supported).
#include "quiver/columnar/concatenate.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "quiver/columnar/validate.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/testing/array_builders.h"
#include "quiver/testing/array_readers.h"
#include "quiver/testing/status_assertions.h"

namespace quiver {
namespace {

using testing::BoolArray;
using testing::Int32Array;
using testing::ListArray;
using testing::MakeArray;
using testing::Render;
using testing::StringArray;

class ConcatenateTest : public ::testing::Test {
 protected:
  MemoryPool* pool() { return pool_.get(); }

  /// Concatenates, validates fully and renders the result.
  std::string ConcatRender(const std::vector<ArrayDataPtr>& parts) {
    auto r = ConcatenateArrays(parts, pool());
    EXPECT_OK(r);
    if (!r.ok()) return "<error>";
    EXPECT_OK(ValidateArray(**r, ValidationLevel::kFull, "concat"));
    int64_t nulls = 0;
    for (const auto& p : parts) nulls += p->null_count;
    EXPECT_EQ((*r)->null_count, nulls);
    return Render(**r);
  }

  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot({"concat-test"});
};

ArrayDataPtr Sliced(const ArrayDataPtr& a, int64_t offset, int64_t length) {
  auto s = SliceArray(a, offset, length);
  EXPECT_OK(s);
  return *s;
}

TEST_F(ConcatenateTest, FixedWidthWithNullsAndOffsets) {
  auto a = Int32Array(pool(), {1, std::nullopt, 3});
  auto b = Sliced(Int32Array(pool(), {9, 4, std::nullopt, 6, 9}), 1, 3);
  EXPECT_EQ(ConcatRender({a, b}), "1,null,3,4,null,6");
  // Without any null the result carries no validity bitmap.
  auto c = ConcatenateArrays({Int32Array(pool(), {1}), Int32Array(pool(), {2})}, pool());
  ASSERT_OK(c);
  EXPECT_EQ((*c)->null_count, 0);
  EXPECT_EQ((*c)->buffers[0], nullptr);
}

TEST_F(ConcatenateTest, BooleanBitsAtUnalignedOffsets) {
  auto a = Sliced(BoolArray(pool(), {true, true, false, std::nullopt, true}), 1, 4);
  auto b = BoolArray(pool(), {false, true, std::nullopt});
  EXPECT_EQ(ConcatRender({a, b, a}), "true,false,null,true,false,true,null,true,false,null,true");
}

TEST_F(ConcatenateTest, StringsRebaseOffsets) {
  auto a = StringArray(pool(), {"ab", std::nullopt, "c"});
  auto b = Sliced(StringArray(pool(), {"skip", "", "def"}), 1, 2);
  EXPECT_EQ(ConcatRender({a, b}), "ab,null,c,,def");
  auto la = StringArray<int64_t>(pool(), {"x", "yz"});
  auto lb = StringArray<int64_t>(pool(), {std::nullopt, "w"});
  EXPECT_EQ(ConcatRender({la, lb}), "x,yz,null,w");
}

TEST_F(ConcatenateTest, ListsConcatenateTheirChildren) {
  auto a = ListArray(pool(), Int32Array(pool(), {1, 2, 3}), {0, 2, 3});
  auto b = Sliced(ListArray(pool(), Int32Array(pool(), {7, 8, 9, 10}), {0, 1, 1, 4}, {true, false, true}), 1, 2);
  EXPECT_EQ(ConcatRender({a, b}), "[1,2],[3],null,[8,9,10]");
}

TEST_F(ConcatenateTest, StructsConcatenateEachChild) {
  auto type = struct_({field("i", int32()), field("s", utf8())});
  auto a = MakeArray(type, 2, {nullptr}, {Int32Array(pool(), {1, 2}), StringArray(pool(), {"a", "b"})});
  auto b = Sliced(MakeArray(type, 3, {nullptr}, {Int32Array(pool(), {7, 8, 9}), StringArray(pool(), {"x", "y", "z"})}),
                  1, 2);
  EXPECT_EQ(ConcatRender({a, b}), "{i=1 s=a},{i=2 s=b},{i=8 s=y},{i=9 s=z}");
}

TEST_F(ConcatenateTest, OneInputIsReturnedAsIs) {
  auto a = Int32Array(pool(), {1, 2});
  ASSERT_OK_AND_ASSIGN(auto r, ConcatenateArrays({a}, pool()));
  EXPECT_EQ(r, a);
}

TEST_F(ConcatenateTest, DictionariesMustBeShared) {
  auto dict = StringArray(pool(), {"red", "green"});
  auto type = dictionary(int32(), utf8());
  auto with = [&](ArrayDataPtr d, std::vector<std::optional<int32_t>> idx) {
    auto a = std::const_pointer_cast<ArrayData>(Int32Array(pool(), idx));
    a->type = type;
    a->dictionary = std::move(d);
    return ArrayDataPtr(a);
  };
  EXPECT_EQ(ConcatRender({with(dict, {0, 1}), with(dict, {1, std::nullopt})}), "red,green,green,null");
  auto other = StringArray(pool(), {"red", "green"});
  ASSERT_RAISES_WITH_MESSAGE(NotImplemented, "concatenating dictionary arrays with different dictionaries",
                             ConcatenateArrays({with(dict, {0}), with(other, {0})}, pool()));
}

TEST_F(ConcatenateTest, Errors) {
  ASSERT_RAISES_WITH_MESSAGE(Invalid, "nothing to concatenate", ConcatenateArrays({}, pool()));
  ASSERT_RAISES_WITH_MESSAGE(Invalid, "cannot concatenate",
                             ConcatenateArrays({Int32Array(pool(), {1}), StringArray(pool(), {"a"})}, pool()));
  auto view = MakeArray(utf8_view(), 0, {nullptr, nullptr});
  ASSERT_RAISES_WITH_MESSAGE(NotImplemented, "concatenating arrays of type", ConcatenateArrays({view, view}, pool()));
}

TEST_F(ConcatenateTest, NullArraysAddLengths) {
  auto a = MakeArray(null(), 2, {}, {}, 2);
  auto b = MakeArray(null(), 3, {}, {}, 3);
  ASSERT_OK_AND_ASSIGN(auto r, ConcatenateArrays({a, b}, pool()));
  EXPECT_EQ(r->length, 5);
  EXPECT_EQ(r->null_count, 5);
}

}  // namespace
}  // namespace quiver
