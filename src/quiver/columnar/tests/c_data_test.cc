// Arrow C Data / C Stream Interface: format strings, release semantics
// (exactly once, children moved out and released in any order, buffers kept
// alive until the last release), zero-copy round trips, import errors, and
// stream errors reaching get_last_error.
#include "quiver/columnar/c_data.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "quiver/columnar/compare.h"
#include "quiver/testing/array_builders.h"
#include "quiver/testing/array_readers.h"
#include "quiver/testing/status_assertions.h"

namespace quiver {
namespace {

using testing::BufferOf;
using testing::Int32Array;
using testing::ListArray;
using testing::MakeArray;
using testing::StringArray;

class CDataTest : public ::testing::Test {
 protected:
  std::shared_ptr<MemoryPool> pool_ = MemoryPool::MakeRoot();
};

std::string FormatOf(const DataTypePtr& t) {
  auto r = CDataFormatOf(*t);
  EXPECT_OK(r);
  return r.ok() ? *r : std::string();
}

TEST(CDataFormat, MatchesTheSpecificationTable) {
  EXPECT_EQ(FormatOf(int32()), "i");
  EXPECT_EQ(FormatOf(uint64()), "L");
  EXPECT_EQ(FormatOf(float16()), "e");
  EXPECT_EQ(FormatOf(large_utf8()), "U");
  EXPECT_EQ(FormatOf(utf8_view()), "vu");
  EXPECT_EQ(FormatOf(fixed_size_binary(16)), "w:16");
  EXPECT_EQ(FormatOf(decimal(128, 38, 10)), "d:38,10");
  EXPECT_EQ(FormatOf(decimal(256, 76, 2)), "d:76,2,256");
  EXPECT_EQ(FormatOf(date32()), "tdD");
  EXPECT_EQ(FormatOf(date64()), "tdm");
  EXPECT_EQ(FormatOf(time64(TimeUnit::kNano)), "ttn");
  EXPECT_EQ(FormatOf(timestamp(TimeUnit::kMicro, "UTC")), "tsu:UTC");
  EXPECT_EQ(FormatOf(timestamp(TimeUnit::kSecond)), "tss:");
  EXPECT_EQ(FormatOf(duration(TimeUnit::kMilli)), "tDm");
  EXPECT_EQ(FormatOf(interval_month_day_nano()), "tin");
  EXPECT_EQ(FormatOf(list(field("item", int8()))), "+l");
  EXPECT_EQ(FormatOf(large_list_view(field("item", int8()))), "+vL");
  EXPECT_EQ(FormatOf(fixed_size_list(field("item", int8()), 3)), "+w:3");
  EXPECT_EQ(FormatOf(dense_union({field("a", int8()), field("b", utf8())}, {4, 7})), "+ud:4,7");
  EXPECT_EQ(FormatOf(sparse_union({field("a", int8())}, {0})), "+us:0");
  EXPECT_EQ(FormatOf(dictionary(int16(), utf8())), "s");
}

TEST(CDataSchema, RoundTripsNamesFlagsMetadataAndDictionaries) {
  auto entries = field("entries", struct_({field("key", utf8(), false), field("value", int64())}), false);
  auto schema = std::make_shared<Schema>();
  schema->fields = {
      field("id", int64(), false, {{"k", "v"}, {"ARROW:extension:name", "arrow.uuid"}}),
      field("tags", map(entries, /*keys_sorted=*/true)),
      field("city", dictionary(int32(), utf8(), /*ordered=*/true)),
      field("ts", timestamp(TimeUnit::kNano, "+01:00")),
      field("u", dense_union({field("i", int32()), field("s", utf8())}, {5, 9})),
      field("r", run_end_encoded(field("run_ends", int32(), false), field("values", float64()))),
  };
  schema->metadata = {{"origin", "test"}, {"empty", ""}};

  ArrowSchema c{};
  ASSERT_OK(ExportSchema(*schema, &c));
  EXPECT_STREQ(c.format, "+s");
  ASSERT_EQ(c.n_children, 6);
  EXPECT_STREQ(c.children[0]->name, "id");
  EXPECT_EQ(c.children[0]->flags & ARROW_FLAG_NULLABLE, 0);
  EXPECT_EQ(c.children[1]->flags & ARROW_FLAG_MAP_KEYS_SORTED, ARROW_FLAG_MAP_KEYS_SORTED);
  EXPECT_STREQ(c.children[2]->format, "i");
  ASSERT_NE(c.children[2]->dictionary, nullptr);
  EXPECT_STREQ(c.children[2]->dictionary->format, "u");
  EXPECT_EQ(c.children[2]->flags & ARROW_FLAG_DICTIONARY_ORDERED, ARROW_FLAG_DICTIONARY_ORDERED);

  auto back = ImportSchema(&c);
  ASSERT_OK(back);
  EXPECT_EQ(c.release, nullptr);  // moved in and released
  EXPECT_TRUE((*back)->Equals(*schema, /*check_metadata=*/true)) << (*back)->ToString() << "\nvs\n"
                                                                 << schema->ToString();
}

TEST_F(CDataTest, ArrayRoundTripIsZeroCopyAndKeepsBuffersAliveUntilRelease) {
  const int64_t baseline = pool_->held_bytes();
  ArrowArray c{};
  const uint8_t* values_address = nullptr;
  {
    auto strings = StringArray(pool_.get(), {"a", std::nullopt, "ccc", ""});
    values_address = strings->buffers[2]->data();
    ASSERT_OK(ExportArray(strings, &c));
  }
  // The quiver array is gone; the export still holds its buffers.
  EXPECT_GT(pool_->held_bytes(), baseline);
  EXPECT_EQ(c.length, 4);
  EXPECT_EQ(c.null_count, 1);
  EXPECT_EQ(c.n_buffers, 3);
  EXPECT_EQ(c.buffers[2], values_address);

  auto imported = ImportArray(&c, utf8());
  ASSERT_OK(imported);
  EXPECT_EQ(c.release, nullptr);
  EXPECT_EQ((*imported)->buffers[2]->data(), values_address);  // zero-copy both ways
  EXPECT_EQ((*imported)->buffers[2]->size(), 4);               // from the last offset
  auto expected = StringArray(pool_.get(), {"a", std::nullopt, "ccc", ""});
  EXPECT_OK(CompareArrays(*expected, **imported, {}, "s"));
  expected.reset();
  imported = Status::Invalid("dropped");
  EXPECT_EQ(pool_->held_bytes(), baseline);  // released exactly when the last user went
}

TEST_F(CDataTest, ChildrenMovedOutAndReleasedInAnyOrder) {
  const int64_t baseline = pool_->held_bytes();
  auto child = Int32Array(pool_.get(), {1, 2, std::nullopt, 4, 5});
  auto lists = ListArray(pool_.get(), child, {0, 2, 2, 5});
  auto st = MakeArray(struct_({field("l", lists->type), field("n", int32())}), 3, {nullptr},
                      {lists, Int32Array(pool_.get(), {7, 8, 9})});
  ArrowArray c{};
  ASSERT_OK(ExportArray(st, &c));
  st.reset();
  lists.reset();
  child.reset();
  ASSERT_EQ(c.n_children, 2);
  // Move the first child out (the specification's "moving child arrays").
  ArrowArray moved = *c.children[0];
  c.children[0]->release = nullptr;
  // Release the parent first, then the moved child: buffers stay valid in between.
  c.release(&c);
  EXPECT_EQ(c.release, nullptr);
  EXPECT_GT(pool_->held_bytes(), baseline);
  auto list_back = ImportArray(&moved, list(field("item", int32())));
  ASSERT_OK(list_back);
  EXPECT_EQ((*list_back)->length, 3);
  EXPECT_EQ((*list_back)->children[0]->length, 5);
  EXPECT_EQ((*list_back)->children[0]->null_count, 1);
  list_back = Status::Invalid("dropped");
  EXPECT_EQ(pool_->held_bytes(), baseline);
}

TEST_F(CDataTest, RecordBatchAndDictionaryRoundTrip) {
  auto dict_values = StringArray(pool_.get(), {"x", "y"});
  auto indices = Int32Array(pool_.get(), {1, 0, std::nullopt, 1});
  auto dict_array = std::make_shared<ArrayData>(*indices);
  dict_array->type = dictionary(int32(), utf8());
  dict_array->dictionary = dict_values;
  auto batch = std::make_shared<RecordBatch>();
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("d", dict_array->type), field("n", int32(), false)};
  batch->schema = schema;
  batch->num_rows = 4;
  batch->columns = {dict_array, Int32Array(pool_.get(), {1, 2, 3, 4})};

  ArrowArray ca{};
  ArrowSchema cs{};
  ASSERT_OK(ExportRecordBatch(*batch, &ca, &cs));
  EXPECT_STREQ(cs.format, "+s");
  EXPECT_EQ(ca.n_children, 2);
  ASSERT_NE(ca.children[0]->dictionary, nullptr);
  auto schema_back = ImportSchema(&cs);
  ASSERT_OK(schema_back);
  auto batch_back = ImportRecordBatch(&ca, *schema_back);
  ASSERT_OK(batch_back);
  EXPECT_OK(CompareBatches(*batch, **batch_back, {}));
}

TEST_F(CDataTest, ImportRejectsInconsistentArrays) {
  // Wrong buffer count for int32.
  auto ints = Int32Array(pool_.get(), {1, 2, 3});
  ArrowArray c{};
  ASSERT_OK(ExportArray(ints, &c));
  c.n_buffers = 1;
  auto r = ImportArray(&c, int32());
  ASSERT_RAISES(Invalid, r);
  EXPECT_NE(r.status().ToString().find("expected 2 buffers, got 1"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(c.release, nullptr);  // released on failure too

  // Offsets pointing past... a negative length.
  ASSERT_OK(ExportArray(ints, &c));
  c.length = -1;
  r = ImportArray(&c, int32());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("negative length -1"), std::string::npos) << r.status().ToString();

  // Unknown format string.
  ArrowSchema s{};
  ASSERT_OK(ExportType(*int32(), &s));
  const char* saved = s.format;
  s.format = "Q";
  auto t = ImportType(&s);
  s.format = saved;
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().ToString().find("unknown format string 'Q'"), std::string::npos);
}

/// A stream that yields one batch, then fails.
class FailingStream : public RecordBatchStream {
 public:
  explicit FailingStream(RecordBatchPtr batch) : batch_(std::move(batch)) {}
  const SchemaPtr& schema() const override { return batch_->schema; }
  Result<RecordBatchPtr> Next() override {
    if (calls_++ == 0) return batch_;
    return Status::Invalid("chunk 3: rows [10, 20): expected 10 rows, got 7");
  }

 private:
  RecordBatchPtr batch_;
  int calls_ = 0;
};

TEST_F(CDataTest, StreamErrorsReachGetLastErrorAndRoundTrip) {
  auto batch = std::make_shared<RecordBatch>();
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("n", int32())};
  batch->schema = schema;
  batch->num_rows = 3;
  batch->columns = {Int32Array(pool_.get(), {1, std::nullopt, 3})};

  ArrowArrayStream c{};
  ASSERT_OK(ExportRecordBatchStream(std::make_unique<FailingStream>(batch), &c));
  ArrowArray a{};
  ASSERT_EQ(c.get_next(&c, &a), 0);
  ASSERT_NE(a.release, nullptr);
  a.release(&a);
  EXPECT_EQ(c.get_next(&c, &a), EINVAL);
  ASSERT_NE(c.get_last_error(&c), nullptr);
  EXPECT_NE(std::string(c.get_last_error(&c)).find("expected 10 rows, got 7"), std::string::npos);
  c.release(&c);
  EXPECT_EQ(c.release, nullptr);

  // Through the importer: the first batch, then the error as a Status.
  ASSERT_OK(ExportRecordBatchStream(std::make_unique<FailingStream>(batch), &c));
  auto imported = ImportRecordBatchStream(&c);
  ASSERT_OK(imported);
  EXPECT_EQ(c.release, nullptr);
  auto first = (*imported)->Next();
  ASSERT_OK(first);
  EXPECT_OK(CompareBatches(*batch, **first, {}));
  auto second = (*imported)->Next();
  ASSERT_RAISES(Invalid, second);
  EXPECT_NE(second.status().ToString().find("C stream get_next failed"), std::string::npos);
  EXPECT_NE(second.status().ToString().find("expected 10 rows, got 7"), std::string::npos);
}

}  // namespace
}  // namespace quiver
