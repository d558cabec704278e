// Tests for quiver/columnar/dictionary.h: decoding dictionary arrays (every
// index type, offsets, nulls, out-of-range indices), decoded schemas and
// whole batches.
#include "quiver/columnar/dictionary.h"

#include <gtest/gtest.h>

#include "quiver/columnar/compare.h"
#include "quiver/columnar/validate.h"
#include "quiver/testing/array_builders.h"
#include "quiver/testing/array_readers.h"

namespace quiver {
namespace {

using testing::Int32Array;
using testing::PrimitiveArray;
using testing::StringArray;

class DictionaryTest : public ::testing::Test {
 protected:
  MemoryPool* pool() { return pool_.get(); }

  template <typename T>
  ArrayDataPtr Dict(DataTypePtr index_type, const std::vector<std::optional<T>>& indices, ArrayDataPtr dict) {
    auto idx = PrimitiveArray<T>(pool(), index_type, indices);
    auto a = std::make_shared<ArrayData>(*idx);
    a->type = dictionary(index_type, dict->type);
    a->dictionary = std::move(dict);
    return a;
  }

  void ExpectEqual(const ArrayDataPtr& expected, const ArrayDataPtr& actual) {
    Status st = CompareArrays(*expected, *actual, CompareOptions{}, "col");
    EXPECT_TRUE(st.ok()) << st.ToString();
  }

  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

TEST_F(DictionaryTest, DecodesEveryIndexType) {
  auto dict = StringArray<int32_t>(pool(), {"zero", "one", std::nullopt, "three"});
  const auto expected = StringArray<int32_t>(pool(), {"three", std::nullopt, "zero", std::nullopt, "one"});
  std::vector<ArrayDataPtr> arrays = {
      Dict<int8_t>(int8(), {3, std::nullopt, 0, 2, 1}, dict),
      Dict<int16_t>(int16(), {3, std::nullopt, 0, 2, 1}, dict),
      Dict<int32_t>(int32(), {3, std::nullopt, 0, 2, 1}, dict),
      Dict<int64_t>(int64(), {3, std::nullopt, 0, 2, 1}, dict),
      Dict<uint8_t>(uint8(), {3, std::nullopt, 0, 2, 1}, dict),
      Dict<uint16_t>(uint16(), {3, std::nullopt, 0, 2, 1}, dict),
      Dict<uint32_t>(uint32(), {3, std::nullopt, 0, 2, 1}, dict),
      Dict<uint64_t>(uint64(), {3, std::nullopt, 0, 2, 1}, dict),
  };
  for (const auto& a : arrays) {
    SCOPED_TRACE(a->type->ToString());
    auto r = DecodeDictionary(*a, pool(), "column 'd'");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE((*r)->type->Equals(*utf8()));
    EXPECT_EQ((*r)->null_count, 2);
    EXPECT_TRUE(ValidateArray(**r, ValidationLevel::kFull, "decoded").ok());
    ExpectEqual(expected, *r);
  }
}

TEST_F(DictionaryTest, HonoursTheOffset) {
  auto a = Dict<int32_t>(int32(), {0, 1, 2, std::nullopt, 1}, Int32Array(pool(), {10, 20, 30}));
  auto sliced = SliceArray(a, 2, 3);  // [2, null, 1]
  ASSERT_TRUE(sliced.ok());
  auto r = DecodeDictionary(**sliced, pool(), "d");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectEqual(Int32Array(pool(), {30, std::nullopt, 20}), *r);
}

TEST_F(DictionaryTest, IndexOutsideTheDictionary) {
  auto a = Dict<int8_t>(int8(), {0, 3}, Int32Array(pool(), {1, 2, 3}));
  auto r = DecodeDictionary(*a, pool(), "column 'd'");
  ASSERT_TRUE(r.status().IsInvalid());
  EXPECT_EQ(r.status().message(), "column 'd': index 3 at row 1 is outside its dictionary of 3");
  auto neg = Dict<int8_t>(int8(), {-1}, Int32Array(pool(), {1}));
  EXPECT_EQ(DecodeDictionary(*neg, pool(), "d").status().message(),
            "d: index -1 at row 0 is outside its dictionary of 1");
}

TEST_F(DictionaryTest, NullIndexMayHoldAnyValue) {
  // The value under a null index is not looked up.
  auto idx = PrimitiveArray<int8_t>(pool(), int8(), {0, std::nullopt});
  auto a = std::make_shared<ArrayData>(*idx);
  a->type = dictionary(int8(), int32());
  a->dictionary = Int32Array(pool(), {5});
  a->buffers[1]->mutable_data()[1] = 99;
  auto r = DecodeDictionary(*a, pool(), "d");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectEqual(Int32Array(pool(), {5, std::nullopt}), *r);
}

TEST_F(DictionaryTest, Errors) {
  auto plain = Int32Array(pool(), {1});
  EXPECT_EQ(DecodeDictionary(*plain, pool(), "column 'p'").status().message(), "column 'p' is not dictionary-encoded");
  auto a = Dict<int8_t>(int8(), {0}, Int32Array(pool(), {1}));
  auto no_dict = std::make_shared<ArrayData>(*a);
  no_dict->dictionary = nullptr;
  EXPECT_EQ(DecodeDictionary(*no_dict, pool(), "column 'd'").status().message(), "column 'd' has no dictionary");
}

TEST_F(DictionaryTest, DecodedSchemaAndBatches) {
  auto dict = StringArray<int32_t>(pool(), {"a", "b"});
  auto d = Dict<int32_t>(int32(), {1, 0, std::nullopt}, dict);
  auto plain = Int32Array(pool(), {7, 8, 9});
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("d", d->type, true), field("p", int32(), false)};
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = 3;
  batch->columns = {d, plain};

  bool any = false;
  auto s = DecodedSchema(schema, &any);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(any);
  EXPECT_TRUE((*s)->fields[0]->type->Equals(*utf8()));
  EXPECT_EQ((*s)->fields[0]->name, "d");
  EXPECT_TRUE((*s)->fields[1]->type->Equals(*int32()));
  EXPECT_FALSE((*s)->fields[1]->nullable);

  auto out = DecodeDictionaries(batch, pool());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE((*out)->CheckShape().ok());
  EXPECT_EQ((*out)->columns[1], plain);  // shared
  ExpectEqual(StringArray<int32_t>(pool(), {"b", "a", std::nullopt}), (*out)->columns[0]);

  // No dictionary: the batch itself.
  auto plain_batch = std::make_shared<RecordBatch>();
  auto plain_schema = std::make_shared<Schema>();
  plain_schema->fields = {field("p", int32())};
  plain_batch->schema = plain_schema;
  plain_batch->num_rows = 3;
  plain_batch->columns = {plain};
  auto same = DecodeDictionaries(plain_batch, pool());
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, plain_batch);
  bool none = true;
  ASSERT_TRUE(DecodedSchema(plain_batch->schema, &none).ok());
  EXPECT_FALSE(none);
}

TEST_F(DictionaryTest, DictionaryOfDictionariesIsNotImplemented) {
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("dd", dictionary(int8(), dictionary(int8(), utf8())))};
  bool any = false;
  auto s = DecodedSchema(schema, &any);
  ASSERT_TRUE(s.status().IsNotImplemented());
  EXPECT_EQ(s.status().message(), "column 'dd' is a dictionary of dictionaries");
}

}  // namespace
}  // namespace quiver
