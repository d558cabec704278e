#include "quiver/memory/buffer.h"
#include "quiver/testing/status_assertions.h"

#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <vector>

namespace quiver {
namespace {

// Counts Allocate / Free calls on top of the system allocator.
class CountingAllocator final : public Allocator {
 public:
  AllocatorKind kind() const noexcept override { return AllocatorKind::kSystem; }
  uint8_t* Allocate(int64_t size_bytes, int64_t alignment) noexcept override {
    ++allocations;
    return system->Allocate(size_bytes, alignment);
  }
  void Free(uint8_t* ptr, int64_t size_bytes, int64_t alignment) noexcept override {
    ++frees;
    system->Free(ptr, size_bytes, alignment);
  }
  Allocator* system = *GetAllocator(AllocatorKind::kSystem);
  std::atomic<int> allocations{0};
  std::atomic<int> frees{0};
};

std::shared_ptr<MemoryPool> Pool(Allocator* allocator = nullptr, int64_t limit_bytes = -1) {
  MemoryPoolOptions options;
  options.allocator = allocator;
  options.limit_bytes = limit_bytes;
  return MemoryPool::MakeRoot(options);
}

TEST(BufferTest, ReleasesExactlyOnce) {
  CountingAllocator counting;
  auto pool = Pool(&counting);
  {
    Result<std::shared_ptr<Buffer>> buffer = Buffer::Allocate(pool.get(), 4096);
    ASSERT_OK(buffer);
    std::shared_ptr<Buffer> copy = *buffer;
    EXPECT_EQ((*buffer)->size(), 4096);
    EXPECT_EQ((*buffer)->capacity_bytes(), 4096);
    EXPECT_TRUE((*buffer)->is_mutable());
    EXPECT_NE((*buffer)->mutable_data(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*buffer)->data()) % 64, 0u);
    EXPECT_EQ(pool->held_bytes(), 4096);
    EXPECT_EQ(BufferPool(**buffer), pool.get());
  }
  EXPECT_EQ(counting.allocations.load(), 1);
  EXPECT_EQ(counting.frees.load(), 1);
  EXPECT_EQ(pool->held_bytes(), 0);
  EXPECT_OK(pool->Close());
}

TEST(BufferTest, BufferKeepsPoolAlive) {
  auto pool = Pool();
  auto child = pool->MakeChild(MemoryPoolOptions{.name = "child"});
  std::weak_ptr<MemoryPool> weak_child = child;
  Result<std::shared_ptr<Buffer>> buffer = Buffer::Allocate(child.get(), 100);
  ASSERT_OK(buffer);
  child.reset();
  EXPECT_FALSE(weak_child.expired());
  EXPECT_EQ(pool->held_bytes(), 100);
  buffer->reset();
  EXPECT_TRUE(weak_child.expired());
  EXPECT_EQ(pool->held_bytes(), 0);
}

TEST(BufferTest, SlicesKeepParentAlive) {
  CountingAllocator counting;
  auto pool = Pool(&counting);
  std::vector<uint8_t> bytes(256);
  std::iota(bytes.begin(), bytes.end(), 0);
  Result<std::shared_ptr<Buffer>> parent = Buffer::CopyOf(pool.get(), bytes);
  ASSERT_OK(parent);
  std::shared_ptr<Buffer> slice = Buffer::Slice(*parent, 10, 20);
  std::shared_ptr<Buffer> nested = Buffer::Slice(slice, 5, 5);
  parent->reset();
  slice.reset();
  EXPECT_EQ(pool->held_bytes(), 256);
  EXPECT_EQ(counting.frees.load(), 0);
  ASSERT_EQ(nested->size(), 5);
  EXPECT_EQ(nested->data()[0], 15);
  EXPECT_EQ(nested->data()[4], 19);
  EXPECT_FALSE(nested->is_mutable());
  EXPECT_EQ(nested->mutable_data(), nullptr);
  EXPECT_EQ(nested->capacity_bytes(), 0);
  EXPECT_EQ(BufferPool(*nested), nullptr);
  nested.reset();
  EXPECT_EQ(pool->held_bytes(), 0);
  EXPECT_EQ(counting.frees.load(), 1);
}

TEST(BufferTest, WrapKeepsOwnerAndUnownedDoesNot) {
  bool released = false;
  std::shared_ptr<void> owner(static_cast<void*>(&released), [](void* flag) { *static_cast<bool*>(flag) = true; });
  static const uint8_t kBytes[] = {1, 2, 3, 4};
  std::shared_ptr<Buffer> wrapped = Buffer::Wrap(kBytes, 4, owner);
  owner.reset();
  EXPECT_FALSE(released);
  EXPECT_EQ(wrapped->view(), std::string_view("\x01\x02\x03\x04", 4));
  wrapped.reset();
  EXPECT_TRUE(released);

  std::shared_ptr<Buffer> unowned = Buffer::Unowned(kBytes, 3);
  EXPECT_EQ(unowned->size(), 3);
  EXPECT_EQ(unowned->data(), kBytes);
  EXPECT_TRUE(unowned->Equals(*Buffer::Unowned(kBytes, 3)));
  EXPECT_FALSE(unowned->Equals(*Buffer::Unowned(kBytes, 4)));
  Status st = unowned->Resize(10);
  EXPECT_TRUE(st.IsInvalid());
}

TEST(BufferTest, AllocateZeroedAndZeroSize) {
  auto pool = Pool();
  Result<std::shared_ptr<Buffer>> zeroed = Buffer::AllocateZeroed(pool.get(), 1000);
  ASSERT_OK(zeroed);
  for (uint8_t b : (*zeroed)->span()) ASSERT_EQ(b, 0);
  Result<std::shared_ptr<Buffer>> empty = Buffer::Allocate(pool.get(), 0);
  ASSERT_OK(empty);
  EXPECT_NE((*empty)->data(), nullptr);
  EXPECT_EQ((*empty)->size(), 0);
  EXPECT_EQ(pool->held_bytes(), 1000);
}

TEST(BufferTest, AllocateFailureChargesNothing) {
  auto pool = Pool(nullptr, 100);
  Result<std::shared_ptr<Buffer>> buffer = Buffer::Allocate(pool.get(), 101);
  ASSERT_RAISES(OutOfMemory, buffer);
  EXPECT_EQ(pool->held_bytes(), 0);
  EXPECT_TRUE(Buffer::Allocate(nullptr, 10).status().IsInvalid());
}

TEST(BufferTest, ResizeFollowsCapacity) {
  for (AllocatorKind kind :
       {AllocatorKind::kSystem, AllocatorKind::kJemalloc, AllocatorKind::kMimalloc, AllocatorKind::kMmap}) {
    SCOPED_TRACE(std::string(AllocatorKindName(kind)));
    auto pool = Pool(*GetAllocator(kind), 1 << 20);
    Result<std::shared_ptr<Buffer>> r = Buffer::Allocate(pool.get(), 1000);
    ASSERT_OK(r);
    std::shared_ptr<Buffer> buffer = *r;
    for (int i = 0; i < 1000; ++i) buffer->mutable_data()[i] = static_cast<uint8_t>(i * 3);

    ASSERT_OK(buffer->Resize(100000));
    EXPECT_EQ(buffer->size(), 100000);
    EXPECT_EQ(buffer->capacity_bytes(), 100000);
    EXPECT_EQ(pool->held_bytes(), 100000);

    ASSERT_OK(buffer->Resize(500, /*shrink_to_fit=*/false));
    EXPECT_EQ(buffer->size(), 500);
    EXPECT_EQ(buffer->capacity_bytes(), 100000);

    ASSERT_OK(buffer->Resize(500));
    EXPECT_EQ(buffer->capacity_bytes(), 500);
    EXPECT_EQ(pool->held_bytes(), 500);
    for (int i = 0; i < 500; ++i) ASSERT_EQ(buffer->data()[i], static_cast<uint8_t>(i * 3));

    Status st = buffer->Resize(2 << 20);
    EXPECT_TRUE(st.IsOutOfMemory());
    EXPECT_EQ(buffer->size(), 500) << "unchanged on error";
    EXPECT_EQ(pool->held_bytes(), 500);
    buffer.reset();
    r = Result<std::shared_ptr<Buffer>>(Status::Cancelled("released"));
    EXPECT_EQ(pool->held_bytes(), 0);
  }
}

}  // namespace
}  // namespace quiver
