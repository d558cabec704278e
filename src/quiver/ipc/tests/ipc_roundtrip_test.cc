// IPC reader/writer round trips on hand-built batches: every format and
// codec, slices, dictionary deltas and replacements, dictionary ids.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "quiver/ipc/tests/ipc_test_batches.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::ipc {
namespace {

class RoundTrip : public ::testing::TestWithParam<std::tuple<IpcFormat, CompressionType>> {};

TEST_P(RoundTrip, MixedTypesSurviveEveryFormatAndCodec) {
  auto [format, codec] = GetParam();
  Fixture f;
  auto batch = TestBatch(f.pool.get(), 1000);
  auto bytes = Write({batch, batch}, format, codec, f.pool.get());
  ASSERT_OK(bytes);
  std::unique_ptr<RecordBatchReader> reader;
  auto back = Read(*bytes, f.pool.get(), &reader, /*collect_body_stats=*/true);
  ASSERT_OK(back);
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ(reader->format(), format);
  EXPECT_EQ(reader->last_batch_stats().codec, codec);
  EXPECT_EQ(reader->num_dictionary_batches(), 1);
  CompareOptions exact{0, 0, true};
  ASSERT_OK(CompareSchemas(*batch->schema, *reader->schema(), exact));
  for (const auto& b : *back) {
    Status st = CompareBatches(*batch, *b, exact);
    EXPECT_OK(st);
  }
}

INSTANTIATE_TEST_SUITE_P(All, RoundTrip,
                         ::testing::Combine(::testing::Values(IpcFormat::kStream, IpcFormat::kFile),
                                            ::testing::Values(CompressionType::kNone, CompressionType::kLz4Frame,
                                                              CompressionType::kZstd)));

TEST(IpcWriter, SlicedBatchesWriteOnlyTheirRows) {
  Fixture f;
  auto batch = TestBatch(f.pool.get(), 1001);
  auto bytes = Write({batch}, IpcFormat::kStream, CompressionType::kZstd, f.pool.get(), 333);
  ASSERT_OK(bytes);
  auto back = Read(*bytes, f.pool.get());
  ASSERT_OK(back);
  ASSERT_EQ(back->size(), 4u);  // 333 + 333 + 333 + 2
  EXPECT_EQ((*back)[3]->num_rows, 2);
  int64_t off = 0;
  for (const auto& piece : *back) {
    auto expected = SliceBatch(batch, off, piece->num_rows);
    ASSERT_OK(expected);
    Status st = CompareBatches(**expected, *piece, CompareOptions{0, 0, false});
    EXPECT_OK(st) << "piece at " << off;
    off += piece->num_rows;
  }
}

TEST(IpcWriter, DictionaryDeltaAndReplacement) {
  Fixture f;
  auto* pool = f.pool.get();
  auto b1 = TestBatch(pool, 10, StringArray(pool, {"red", "green"}));
  auto b2 = TestBatch(pool, 10, StringArray(pool, {"red", "green", "blue"}));  // delta
  auto b3 = TestBatch(pool, 10, StringArray(pool, {"cyan", "magenta"}));       // replacement
  auto stream = Write({b1, b2, b3}, IpcFormat::kStream, CompressionType::kLz4Frame, pool);
  ASSERT_OK(stream);
  std::unique_ptr<RecordBatchReader> reader;
  auto back = Read(*stream, pool, &reader);
  ASSERT_OK(back);
  ASSERT_EQ(back->size(), 3u);
  EXPECT_EQ(reader->num_dictionary_batches(), 3);
  EXPECT_EQ(reader->num_dictionary_deltas(), 1);
  EXPECT_EQ((*back)[1]->columns[4]->dictionary->length, 3);
  EXPECT_EQ((*back)[2]->columns[4]->dictionary->length, 2);
  for (size_t i = 0; i < 3; ++i) {
    Status st = CompareBatches(*std::vector<RecordBatchPtr>{b1, b2, b3}[i], *(*back)[i], CompareOptions{0, 0, false});
    EXPECT_OK(st);
  }
  // The file format allows the delta but not the replacement.
  auto file_ok = Write({b1, b2}, IpcFormat::kFile, CompressionType::kNone, pool);
  ASSERT_OK(file_ok);
  auto file_back = Read(*file_ok, pool);
  ASSERT_OK(file_back);
  EXPECT_EQ((*file_back)[1]->columns[4]->dictionary->length, 3);
  auto file_bad = Write({b1, b3}, IpcFormat::kFile, CompressionType::kNone, pool);
  ASSERT_FALSE(file_bad.ok());
  EXPECT_NE(file_bad.status().message().find("cannot replace dictionaries"), std::string::npos)
      << file_bad.status().ToString();
}

// Schemas built in memory (or imported through the C Data Interface) carry
// no IPC dictionary ids (-1). The writer gives each such field its own id,
// above the ids in use; before, all of them shared id -1, so the second
// column's dictionary was written as a delta of the first's and the file
// read back with indices outside their dictionary.
TEST(IpcWriter, DictionaryFieldsWithoutIdsGetDistinctIds) {
  Fixture f;
  auto* pool = f.pool.get();
  auto make_dict = [&](std::vector<std::optional<std::string>> values, std::vector<std::optional<int32_t>> idx) {
    auto a = std::make_shared<ArrayData>(*Int32Array(pool, idx));
    a->type = dictionary(int32(), utf8());
    a->dictionary = StringArray(pool, values);
    return ArrayDataPtr(a);
  };
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("a", dictionary(int32(), utf8())), field("b", dictionary(int32(), utf8())),
                    field("c", dictionary(int32(), utf8()), true, {}, /*dictionary_id=*/0)};
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = 3;
  batch->columns = {make_dict({"x", "y"}, {0, 1, 1}), make_dict({"p", "q", "r", "s"}, {3, 2, std::nullopt}),
                    make_dict({"only"}, {0, 0, 0})};
  for (auto format : {IpcFormat::kStream, IpcFormat::kFile}) {
    auto bytes = Write({batch, batch}, format, CompressionType::kNone, pool);
    ASSERT_OK(bytes);
    std::unique_ptr<RecordBatchReader> reader;
    auto back = Read(*bytes, pool, &reader);
    ASSERT_OK(back);
    ASSERT_EQ(back->size(), 2u);
    EXPECT_EQ(reader->num_dictionary_batches(), 3);
    EXPECT_EQ(reader->schema()->fields[2]->dictionary_id, 0);  // kept
    std::set<int64_t> ids;
    for (const auto& fld : reader->schema()->fields) ids.insert(fld->dictionary_id);
    EXPECT_EQ(ids, (std::set<int64_t>{0, 1, 2}));
    for (const auto& b : *back) {
      Status st = CompareBatches(*batch, *b, CompareOptions{0, 0, false});
      EXPECT_OK(st);
    }
  }
}

}  // namespace
}  // namespace quiver::ipc
