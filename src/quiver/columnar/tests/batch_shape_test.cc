// Tests for quiver/columnar/batch_shape.h: column count, types, lengths,
// missing arrays, the column subset and the order of the checks.
#include "quiver/columnar/batch_shape.h"

#include <gtest/gtest.h>

#include "quiver/testing/array_builders.h"
#include "quiver/testing/array_readers.h"

namespace quiver {
namespace {

using Kind = BatchShapeMismatch::Kind;
using testing::Int32Array;
using testing::StringArray;

class BatchShapeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    schema_.fields = {field("a", int32()), field("s", utf8()), field("b", int32())};
    batch_.num_rows = 2;
    batch_.columns = {Int32Array(pool_.get(), {1, 2}), StringArray(pool_.get(), {"x", "y"}),
                      Int32Array(pool_.get(), {3, 4})};
  }
  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
  Schema schema_;
  RecordBatch batch_;
};

TEST_F(BatchShapeTest, MatchingBatch) {
  const BatchShapeMismatch m = FindBatchShapeMismatch(schema_, batch_);
  EXPECT_TRUE(m.ok());
  EXPECT_EQ(m.column, -1);
}

TEST_F(BatchShapeTest, ColumnCount) {
  batch_.columns.pop_back();
  const BatchShapeMismatch m = FindBatchShapeMismatch(schema_, batch_);
  EXPECT_EQ(m.kind, Kind::kColumnCount);
  EXPECT_EQ(m.column, -1);
}

TEST_F(BatchShapeTest, TypeAndLengthInColumnOrder) {
  batch_.columns[2] = Int32Array(pool_.get(), {1, 2, 3});  // length
  batch_.columns[1] = Int32Array(pool_.get(), {1, 2});     // type
  BatchShapeMismatch m = FindBatchShapeMismatch(schema_, batch_);
  EXPECT_EQ(m.kind, Kind::kType);
  EXPECT_EQ(m.column, 1);
  m = FindBatchShapeMismatch(schema_, batch_, {.types = false, .lengths = true});
  EXPECT_EQ(m.kind, Kind::kLength);
  EXPECT_EQ(m.column, 2);
  m = FindBatchShapeMismatch(schema_, batch_, {.types = true, .lengths = false});
  EXPECT_EQ(m.kind, Kind::kType);
  EXPECT_EQ(m.column, 1);
  EXPECT_TRUE(FindBatchShapeMismatch(schema_, batch_, {.types = false, .lengths = false}).ok());
}

TEST_F(BatchShapeTest, TypeBeforeLengthInOneColumn) {
  batch_.columns[0] = StringArray(pool_.get(), {"x"});
  const BatchShapeMismatch m = FindBatchShapeMismatch(schema_, batch_);
  EXPECT_EQ(m.kind, Kind::kType);
  EXPECT_EQ(m.column, 0);
}

TEST_F(BatchShapeTest, MissingArrayOrFieldType) {
  batch_.columns[1] = nullptr;
  BatchShapeMismatch m = FindBatchShapeMismatch(schema_, batch_, {.types = false, .lengths = false});
  EXPECT_EQ(m.kind, Kind::kNoArray);
  EXPECT_EQ(m.column, 1);
  EXPECT_EQ(TypeTextOf(batch_.columns[1]), "<none>");
  SetUp();
  schema_.fields[2] = field("b", nullptr);
  m = FindBatchShapeMismatch(schema_, batch_);
  EXPECT_EQ(m.kind, Kind::kNoArray);
  EXPECT_EQ(m.column, 2);
  EXPECT_EQ(TypeTextOf(schema_.fields[2]), "<none>");
  EXPECT_EQ(TypeTextOf(schema_.fields[0]), int32()->ToString());
}

TEST_F(BatchShapeTest, OnlyTheListedColumnsInTheirOrder) {
  batch_.columns[0] = Int32Array(pool_.get(), {1});  // length mismatch, not listed
  const std::vector<int> keys = {2};
  EXPECT_TRUE(FindBatchShapeMismatch(schema_, batch_, {.columns = &keys}).ok());
  batch_.columns[1] = Int32Array(pool_.get(), {1, 2});
  const std::vector<int> both = {2, 1, 0};
  const BatchShapeMismatch m = FindBatchShapeMismatch(schema_, batch_, {.columns = &both});
  EXPECT_EQ(m.kind, Kind::kType);
  EXPECT_EQ(m.column, 1);
  // The column count is checked whatever the list.
  batch_.columns.pop_back();
  EXPECT_EQ(FindBatchShapeMismatch(schema_, batch_, {.columns = &keys}).kind, Kind::kColumnCount);
}

}  // namespace
}  // namespace quiver
