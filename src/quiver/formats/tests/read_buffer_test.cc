// The buffers the readers fill whole (formats/read_buffer.h): exact below
// 64 KiB, the allocator's size class from there (charged as such), so
// that buffers a few bytes apart take the same allocation.
#include <gtest/gtest.h>

#include "quiver/formats/read_buffer.h"
#include "quiver/memory/allocator.h"
#include "quiver/testing/status_assertions.h"

namespace quiver::formats {
namespace {

TEST(ReadBuffer, SmallBuffersAreExactLargeOnesTakeTheirSizeClass) {
  auto pool = MemoryPool::MakeRoot({"read-buffer"});
  {
    auto small = AllocateReadBuffer(pool.get(), 1000);
    ASSERT_OK(small);
    EXPECT_EQ((*small)->size(), 1000);
    EXPECT_EQ(pool->held_bytes(), 1000);
  }
  EXPECT_EQ(pool->held_bytes(), 0);
  // A page body of SF1 lineitem's l_extendedprice (979,377 bytes) and one
  // a few hundred bytes larger: one class of 983,040 bytes (512 KiB / 16
  // steps).
  for (int64_t size : {int64_t{979377}, int64_t{979377 + 600}}) {
    auto b = AllocateReadBuffer(pool.get(), size);
    ASSERT_OK(b);
    EXPECT_EQ((*b)->size(), size);
    EXPECT_NE((*b)->mutable_data(), nullptr);
    EXPECT_EQ(pool->held_bytes(), 983040);
    EXPECT_EQ(SystemMappedBlockBytes(size), 983040);
  }
  EXPECT_EQ(pool->held_bytes(), 0);
  auto limited = MemoryPool::MakeRoot({"read-buffer-limited", 900000});
  auto refused = AllocateReadBuffer(limited.get(), 899000);  // its class (917,504) is over the limit
  EXPECT_TRUE(refused.status().IsOutOfMemory()) << refused.status().ToString();
  EXPECT_EQ(limited->held_bytes(), 0);
}

}  // namespace
}  // namespace quiver::formats
