// What the parallel CSV parse costs (issue 36 §2): the bytes it reads stay
// linear in the file when one row spans many ranges (each range inside a
// 4 MiB row once searched to the row's end: quadratic), and the field
// positions it keeps per thread are charged to the scan's pool, bounded by
// its limit and released when the scan ends.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "quiver/formats/csv/csv_ranges.h"
#include "quiver/formats/csv/csv_reader.h"
#include "quiver/formats/csv/csv_stream.h"
#include "quiver/testing/array_readers.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::formats::csv {
namespace {

using quiver::testing::StringAt;
using quiver::testing::ValueAt;

// A source in memory that counts the bytes read from it.
class CountingSource final : public RandomAccessSource {
 public:
  CountingSource(std::shared_ptr<RandomAccessSource> inner) : inner_(std::move(inner)) {}
  int64_t size() const override { return inner_->size(); }
  const std::string& name() const override { return inner_->name(); }
  Result<std::shared_ptr<Buffer>> ReadAt(int64_t offset, int64_t length, MemoryPool* pool) override {
    bytes_read += length;
    return inner_->ReadAt(offset, length, pool);
  }
  std::atomic<int64_t> bytes_read{0};

 private:
  std::shared_ptr<RandomAccessSource> inner_;
};

std::shared_ptr<RandomAccessSource> InMemory(const std::string& bytes, MemoryPool* pool) {
  auto buf =
      Buffer::CopyOf(pool, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  EXPECT_TRUE(buf.ok());
  return std::make_shared<MemorySource>(*buf, "t.csv");
}

TEST(CsvRangeCostTest, OneLongRowIsReadOnceNotOncePerRange) {
  auto pool = MemoryPool::MakeRoot();
  std::string text = "id,s\n0,a\n1,b\n2,";
  const int64_t long_bytes = int64_t{4} << 20;
  text += std::string(static_cast<size_t>(long_bytes), 'x');
  text += "\n3,c\n4,d\n";
  auto source = std::make_shared<CountingSource>(InMemory(text, pool.get()));
  ASSERT_OK_AND_ASSIGN(auto layout, InferCsvLayout(text.substr(0, 64), false, {}, "t.csv"));
  CsvRangeScan scan(source, layout, {}, std::nullopt, 4096);  // 1,024 ranges, 1,023 of them inside the long row
  std::vector<int64_t> ids;
  int64_t longest = 0;
  for (int64_t k = 0; k < scan.num_ranges(); ++k) {
    ASSERT_OK_AND_ASSIGN(auto b, scan.ParseRange(k, pool.get()));
    for (int64_t r = 0; r < b->num_rows; ++r) {
      ids.push_back(ValueAt<int64_t>(*b->columns[0], r));
      longest = std::max<int64_t>(longest, static_cast<int64_t>(StringAt(*b->columns[1], r).size()));
    }
  }
  EXPECT_EQ(ids, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(longest, long_bytes);
  // Each range reads its own 4 KiB and the one where the row starts reads
  // the row (in doubling steps): a few times the file, where a search from
  // every range to the row's end read about 1,024 x 2 MiB = 2 GiB.
  EXPECT_LT(source->bytes_read.load(), 4 * static_cast<int64_t>(text.size()));
}

// 20,000 rows of 8 one-digit fields: 160,000 field positions, 3.84 MB of scratch.
std::string ShortFields() {
  std::string text = "a,b,c,d,e,f,g,h\n";
  for (int i = 0; i < 20000; ++i) text += std::to_string(i % 10) + ",1,2,3,4,5,6,7\n";
  return text;
}

TEST(CsvRangeCostTest, FieldPositionsAreChargedToTheScanPoolAndReleasedWithTheScan) {
  const std::string text = ShortFields();
  auto data_pool = MemoryPool::MakeRoot();
  auto source = InMemory(text, data_pool.get());
  ASSERT_OK_AND_ASSIGN(auto layout, InferCsvLayout(text, true, {}, "t.csv"));
  constexpr int64_t kScratch = 160000 * static_cast<int64_t>(sizeof(FieldRef));
  auto pool = MemoryPool::MakeRoot();
  RecordBatchPtr batch;
  {
    CsvRangeScan scan(source, layout, {}, std::vector<int>{0}, int64_t{16} << 20);  // one range
    ASSERT_EQ(scan.num_ranges(), 1);
    ASSERT_OK_AND_ASSIGN(batch, scan.ParseRange(0, pool.get()));
    EXPECT_EQ(batch->num_rows, 20000);
    const int64_t batch_bytes = batch->columns[0]->TotalBufferBytes();
    // The scratch stays charged (kept for the scan's next range) ...
    EXPECT_GE(pool->held_bytes(), batch_bytes + kScratch);
  }
  // ... and goes back to the pool with the scan; the batch is what is left.
  EXPECT_LT(pool->held_bytes(), kScratch / 4);
  EXPECT_GE(pool->peak_bytes(), kScratch);
  batch.reset();
  EXPECT_EQ(pool->held_bytes(), 0);

  // A pool whose limit the scratch would pass: OutOfMemory, not heap memory.
  auto capped = MemoryPool::MakeRoot(MemoryPoolOptions{"capped", int64_t{2} << 20});
  {
    CsvRangeScan scan(source, layout, {}, std::vector<int>{0}, int64_t{16} << 20);
    EXPECT_RAISES(OutOfMemory, scan.ParseRange(0, capped.get()));
  }
  EXPECT_EQ(capped->held_bytes(), 0);
}

TEST(CsvRangeCostTest, StreamedScratchIsChargedAndReleasedAtTheEnd) {
  const std::string text = ShortFields();
  auto data_pool = MemoryPool::MakeRoot();
  auto pool = MemoryPool::MakeRoot();
  ASSERT_OK_AND_ASSIGN(auto stream, OpenCsvByteStream(InMemory(text, data_pool.get()), pool.get()));
  ASSERT_OK_AND_ASSIGN(auto reader, CsvStreamReader::Open(std::move(stream), {}, pool.get(), {}, std::vector<int>{0}));
  int64_t rows = 0;
  while (true) {
    ASSERT_OK_AND_ASSIGN(auto b, reader->Next());
    if (!b) break;
    rows += b->num_rows;
  }
  EXPECT_EQ(rows, 20000);
  EXPECT_GE(pool->peak_bytes(), 160000 * static_cast<int64_t>(sizeof(FieldRef)));
  reader.reset();
  EXPECT_EQ(pool->held_bytes(), 0);
}

}  // namespace
}  // namespace quiver::formats::csv
