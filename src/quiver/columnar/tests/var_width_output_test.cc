// Tests for quiver/columnar/var_width_output.h: offsets and data of 32- and
// 64-bit outputs, empty and null values, and the 32-bit overflow error
// (raised before anything is allocated or copied).
#include "quiver/columnar/var_width_output.h"

#include <gtest/gtest.h>

#include <vector>

namespace quiver {
namespace {

TEST(VarWidthOutputTest, OffsetsAndData32And64) {
  auto pool = MemoryPool::MakeRoot();
  const std::vector<std::string_view> values = {"ab", "", "cde", {}};
  for (bool large : {false, true}) {
    std::shared_ptr<Buffer> offsets, data;
    Status st = BuildVarWidthBuffers(
        pool.get(), 4, large, "col", [&](int64_t j) { return values[static_cast<size_t>(j)]; }, &offsets, &data);
    ASSERT_TRUE(st.ok()) << st.ToString();
    const int w = large ? 8 : 4;
    ASSERT_EQ(offsets->size(), 5 * w);
    const std::vector<int64_t> expected = {0, 2, 2, 5, 5};
    for (int i = 0; i < 5; ++i) {
      int64_t v = 0;
      if (large) {
        std::memcpy(&v, offsets->data() + i * 8, 8);
      } else {
        int32_t v32;
        std::memcpy(&v32, offsets->data() + i * 4, 4);
        v = v32;
      }
      EXPECT_EQ(v, expected[static_cast<size_t>(i)]) << "offset " << i << (large ? " (large)" : "");
    }
    EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(data->data()), 5), "abcde");
  }
}

TEST(VarWidthOutputTest, NoBytesStillGivesOneDataByte) {
  auto pool = MemoryPool::MakeRoot();
  std::shared_ptr<Buffer> offsets, data;
  ASSERT_TRUE(BuildVarWidthBuffers(
                  pool.get(), 0, false, "col", [](int64_t) { return std::string_view(); }, &offsets, &data)
                  .ok());
  EXPECT_EQ(offsets->size(), 4);
  EXPECT_EQ(data->size(), 1);
}

TEST(VarWidthOutputTest, ThirtyTwoBitOverflowIsInvalidBeforeAllocating) {
  auto pool = MemoryPool::MakeRoot();
  static const char byte = 'x';
  // Three values of 1 GiB each: only their sizes are read before the check.
  auto huge = [](int64_t) { return std::string_view(&byte, size_t{1} << 30); };
  std::shared_ptr<Buffer> offsets, data;
  Status st = BuildVarWidthBuffers(pool.get(), 3, false, "column 'v'", huge, &offsets, &data);
  ASSERT_TRUE(st.IsInvalid()) << st.ToString();
  EXPECT_EQ(st.message(), "column 'v': 3221225472 bytes of output values overflow 32-bit offsets");
  EXPECT_EQ(pool->held_bytes(), 0);
  EXPECT_EQ(offsets, nullptr);
}

}  // namespace
}  // namespace quiver
