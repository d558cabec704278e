// A Parquet dictionary page decodes into a buffer of the reader's pool:
// its entries are accounted (a chunk's dictionary holds MiBs) and go back
// when the dictionary does; a pool limit below them is OutOfMemory.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "quiver/formats/parquet/encodings.h"
#include "quiver/formats/parquet/metadata.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::parquet {
namespace {

constexpr auto kInt64 = static_cast<int32_t>(PhysicalType::kInt64);
constexpr auto kByteArray = static_cast<int32_t>(PhysicalType::kByteArray);

TEST(ParquetDictionary, FixedEntriesComeFromThePoolAndGoBack) {
  auto pool = MemoryPool::MakeRoot({"parquet-dictionary"});
  constexpr int64_t kEntries = 100000;
  std::vector<uint8_t> page(kEntries * 8);
  for (int64_t i = 0; i < kEntries; ++i) {
    const int64_t v = i * 7 - 3;
    std::memcpy(page.data() + i * 8, &v, 8);
  }
  {
    auto d = DecodeDictionaryPage(kInt64, 8, page, kEntries, nullptr, pool.get());
    ASSERT_OK(d.status());
    EXPECT_FALSE(d->binary);
    EXPECT_EQ(d->size, kEntries);
    EXPECT_EQ(d->views(), nullptr);
    EXPECT_GE(pool->held_bytes(), kEntries * 8);
    int64_t last = 0;
    std::memcpy(&last, d->fixed() + (kEntries - 1) * 8, 8);
    EXPECT_EQ(last, (kEntries - 1) * 7 - 3);
  }
  EXPECT_EQ(pool->held_bytes(), 0);
  auto small = MemoryPool::MakeRoot({"parquet-dictionary-small", kEntries * 8 / 2});
  auto refused = DecodeDictionaryPage(kInt64, 8, page, kEntries, nullptr, small.get());
  EXPECT_TRUE(refused.status().IsOutOfMemory()) << refused.status().ToString();
  EXPECT_EQ(small->held_bytes(), 0);
}

TEST(ParquetDictionary, ByteArrayEntriesAreViewsIntoThePage) {
  auto pool = MemoryPool::MakeRoot({"parquet-dictionary"});
  // PLAIN BYTE_ARRAY: a 4-byte little-endian length before each value.
  std::vector<uint8_t> page;
  for (const char* s : {"AIR", "", "DELIVER IN PERSON"}) {
    const uint32_t n = static_cast<uint32_t>(std::strlen(s));
    page.insert(page.end(), reinterpret_cast<const uint8_t*>(&n), reinterpret_cast<const uint8_t*>(&n) + 4);
    page.insert(page.end(), s, s + n);
  }
  auto d = DecodeDictionaryPage(kByteArray, 0, page, 3, nullptr, pool.get());
  ASSERT_OK(d.status());
  EXPECT_TRUE(d->binary);
  EXPECT_EQ(d->fixed(), nullptr);
  EXPECT_EQ(d->views()[0], "AIR");
  EXPECT_EQ(d->views()[1], "");
  EXPECT_EQ(d->views()[2], "DELIVER IN PERSON");
  EXPECT_GE(pool->held_bytes(), int64_t{3} * static_cast<int64_t>(sizeof(std::string_view)));
  // More entries than the page can hold: Invalid before anything is allocated.
  auto bad = DecodeDictionaryPage(kByteArray, 0, page, 1000, nullptr, pool.get());
  EXPECT_TRUE(bad.status().IsInvalid()) << bad.status().ToString();
}

}  // namespace
}  // namespace quiver::parquet
