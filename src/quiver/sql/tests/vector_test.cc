// Vec (expression/vector.h): IsNull over slices with and without a
// validity bitmap, constants and the null type.
#include <gtest/gtest.h>

#include "quiver/sql/expression/vector.h"
#include "quiver/testing/array_builders.h"

namespace quiver::sql {
namespace {

TEST(Vec, IsNullReadsTheBitmapAtTheArraysOffset) {
  auto pool = MemoryPool::MakeRoot({.name = "vec"});
  ArrayDataPtr a = ::quiver::testing::Int64Array(pool.get(), {1, std::nullopt, 3, std::nullopt, 5});
  Vec v{a, false};
  EXPECT_FALSE(v.IsNull(0));
  EXPECT_TRUE(v.IsNull(1));
  EXPECT_TRUE(v.IsNull(3));
  EXPECT_FALSE(v.IsNull(4));
  // A slice from row 1: its row 0 is the NULL.
  auto slice = std::make_shared<ArrayData>(*a);
  slice->offset = 1;
  slice->length = 4;
  Vec s{slice, false};
  EXPECT_TRUE(s.IsNull(0));
  EXPECT_FALSE(s.IsNull(1));
  EXPECT_TRUE(s.IsNull(2));
  // A constant: row 0 stands for every row.
  Vec c{slice, true};
  EXPECT_TRUE(c.IsNull(3));
  // No nulls counted, or no bitmap: never NULL.
  auto counted = std::make_shared<ArrayData>(*a);
  counted->null_count = 0;
  EXPECT_FALSE((Vec{counted, false}).IsNull(1));
  ArrayDataPtr plain = ::quiver::testing::Int64Array(pool.get(), {1, 2});
  EXPECT_FALSE((Vec{plain, false}).IsNull(1));
  // The null type: every row.
  auto nulls = std::make_shared<ArrayData>();
  nulls->type = null();
  nulls->length = 3;
  nulls->null_count = 3;
  EXPECT_TRUE((Vec{nulls, false}).IsNull(2));
}

}  // namespace
}  // namespace quiver::sql
