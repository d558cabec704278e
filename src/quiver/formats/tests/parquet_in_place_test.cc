// PLAIN fixed-width values of a page whose rows are all present are handed
// out as a slice of the decompressed page (column_reader.cc DecodeInPlace):
// no copy when the values are aligned in the page (a REQUIRED column: the
// values start the page), a copy otherwise (an OPTIONAL column's
// definition levels put them at an odd offset), the same values either way.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <vector>

#include "quiver/formats/parquet/file_reader.h"
#include "quiver/formats/parquet/file_writer.h"
#include "quiver/formats/sink.h"
#include "quiver/formats/source.h"
#include "quiver/testing/array_builders.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::parquet {
namespace {

constexpr int kInPlaceRows = 3000;

int64_t InPlaceValueAt(int i) { return int64_t{i} * 1000003 - 77; }

std::vector<uint8_t> WritePlainFile(MemoryPool* pool, int32_t codec) {
  auto schema = std::make_shared<Schema>();
  schema->fields = {field("req", int64(), /*nullable=*/false), field("opt", int64())};
  std::vector<std::optional<int64_t>> values;
  for (int i = 0; i < kInPlaceRows; ++i) values.push_back(InPlaceValueAt(i));
  auto req = testing::PrimitiveArray<int64_t>(pool, int64(), values);
  auto opt = testing::PrimitiveArray<int64_t>(pool, int64(), values);
  formats::MemorySink sink;
  WriterOptions o;
  o.pool = pool;
  o.codec = codec;
  o.dictionary = false;  // PLAIN pages
  auto writer = FileWriter::Make(schema, &sink, o);
  EXPECT_OK(writer);
  if (!writer.ok()) return {};
  EXPECT_OK((*writer)->WriteBatch(testing::Batch(schema, {req, opt})));
  EXPECT_OK((*writer)->Close());
  return sink.bytes();
}

void ExpectInPlaceValues(const ArrayData& a, int first) {
  ASSERT_EQ(a.buffers.size(), 2u);
  EXPECT_EQ(a.null_count, 0);
  EXPECT_EQ(a.buffers[0], nullptr);
  const uint8_t* data = a.buffers[1]->data();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 8, 0u);
  for (int64_t i = 0; i < a.length; ++i) {
    int64_t v = 0;
    std::memcpy(&v, data + (a.offset + i) * 8, 8);
    ASSERT_EQ(v, InPlaceValueAt(first + static_cast<int>(i))) << "row " << first + i;
  }
}

class ParquetInPlace : public ::testing::TestWithParam<Codec> {};

TEST_P(ParquetInPlace, AlignedPlainValuesAreSlicesOfThePageOthersCopies) {
  auto pool = MemoryPool::MakeRoot({"parquet-in-place"});
  {
    const auto bytes = WritePlainFile(pool.get(), static_cast<int32_t>(GetParam()));
    auto buf = Buffer::CopyOf(pool.get(), bytes);
    ASSERT_OK(buf);
    auto reader = FileReader::Open(std::make_shared<formats::MemorySource>(*buf, "plain.parquet"), pool.get());
    ASSERT_OK(reader);
    ASSERT_EQ((*reader)->num_row_groups(), 1);
    auto slices = (*reader)->OpenRowGroup(0, {}, pool.get());
    ASSERT_OK(slices);
    std::vector<RecordBatchPtr> kept;  // slices outlive the reader's pages
    int first = 0;
    for (int64_t n : {1000, 999, 1, 1000}) {
      auto batch = (*slices)->Next(n);
      ASSERT_OK(batch);
      ASSERT_NE(*batch, nullptr);
      ASSERT_EQ((*batch)->num_rows, n);
      const ArrayData& req = *(*batch)->columns[0];
      const ArrayData& opt = *(*batch)->columns[1];
      ExpectInPlaceValues(req, first);
      ExpectInPlaceValues(opt, first);
      // REQUIRED: the page holds the values alone, from its (64-byte
      // aligned) start: every slice is a view, no pool bytes of its own.
      // OPTIONAL: the definition levels (a 4-byte length and one RLE run of
      // 3 bytes) put the values at byte 7: copied.
      EXPECT_FALSE(req.buffers[1]->is_mutable()) << "rows from " << first;
      EXPECT_EQ(req.buffers[1]->capacity_bytes(), 0) << "rows from " << first;
      EXPECT_TRUE(opt.buffers[1]->is_mutable()) << "rows from " << first;
      kept.push_back(*batch);
      first += static_cast<int>(n);
    }
    auto end = (*slices)->Next(1);
    ASSERT_OK(end);
    EXPECT_EQ(*end, nullptr);
    slices->reset();
    // The values kept are still those of the page.
    first = 0;
    for (const auto& b : kept) {
      ExpectInPlaceValues(*b->columns[0], first);
      first += static_cast<int>(b->num_rows);
    }
  }
  EXPECT_EQ(pool->held_bytes(), 0);
}

INSTANTIATE_TEST_SUITE_P(Codecs, ParquetInPlace, ::testing::Values(Codec::kUncompressed, Codec::kSnappy));

}  // namespace
}  // namespace quiver::parquet
