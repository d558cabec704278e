// quiver/memory/buffer.cc — pool-owned buffers and views.
#include "quiver/memory/buffer.h"

#include <cassert>
#include <string>
#include <utility>

#include "quiver/base/checked_math.h"

namespace quiver {

namespace {

// Owns one PoolAllocation; returns it to its pool exactly once, in the
// destructor. Keeps the pool (and so its ancestors) alive.
class PoolBuffer final : public Buffer {
 public:
  PoolBuffer(std::shared_ptr<MemoryPool> pool, PoolAllocation allocation, int64_t size_bytes)
      : Buffer(allocation.data, size_bytes, /*is_mutable=*/true), pool_(std::move(pool)), allocation_(allocation) {}

  ~PoolBuffer() override { pool_->Free(allocation_); }

  int64_t capacity_bytes() const override { return allocation_.granted_bytes; }

  Status Resize(int64_t new_size_bytes, bool shrink_to_fit) override {
    if (new_size_bytes < 0) {
      return Status::Invalid("cannot resize a buffer to a negative size (" + std::to_string(new_size_bytes) +
                             " bytes)");
    }
    const bool grows_past_capacity = new_size_bytes > allocation_.granted_bytes;
    const bool shrinks_capacity =
        shrink_to_fit && GrantedBytes(pool_->rounding(), new_size_bytes) < allocation_.granted_bytes;
    if (grows_past_capacity || shrinks_capacity) {
      PoolAllocation resized = allocation_;
      QUIVER_RETURN_NOT_OK(pool_->Reallocate(&resized, new_size_bytes));
      allocation_ = resized;
      data_ = allocation_.data;
    }
    size_ = new_size_bytes;
    return Status::OK();
  }

  MemoryPool* pool() const { return pool_.get(); }

 private:
  std::shared_ptr<MemoryPool> pool_;
  PoolAllocation allocation_;
};

// A read-only view of memory kept alive by `owner_` (a parent buffer, a
// mapping), or by nobody for Unowned.
class ViewBuffer final : public Buffer {
 public:
  ViewBuffer(const uint8_t* data, int64_t size_bytes, std::shared_ptr<const void> owner)
      : Buffer(data, size_bytes, /*is_mutable=*/false), owner_(std::move(owner)) {}

 private:
  std::shared_ptr<const void> owner_;
};

}  // namespace

Result<std::shared_ptr<Buffer>> Buffer::Allocate(MemoryPool* pool, int64_t size_bytes, int64_t alignment) {
  if (pool == nullptr) return Status::Invalid("Buffer::Allocate needs a memory pool");
  std::shared_ptr<MemoryPool> owner = pool->weak_from_this().lock();
  if (owner == nullptr) {
    return Status::Invalid("Buffer::Allocate: pool '" + pool->path() + "' is not owned by a std::shared_ptr");
  }
  QUIVER_ASSIGN_OR_RETURN(PoolAllocation allocation, pool->Allocate(size_bytes, alignment));
  return std::shared_ptr<Buffer>(std::make_shared<PoolBuffer>(std::move(owner), allocation, size_bytes));
}

Result<std::shared_ptr<Buffer>> Buffer::AllocateZeroed(MemoryPool* pool, int64_t size_bytes) {
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer, Allocate(pool, size_bytes));
  if (size_bytes > 0) std::memset(buffer->mutable_data(), 0, static_cast<size_t>(size_bytes));
  return buffer;
}

Result<std::shared_ptr<Buffer>> Buffer::CopyOf(MemoryPool* pool, std::span<const uint8_t> bytes) {
  QUIVER_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> buffer, Allocate(pool, static_cast<int64_t>(bytes.size())));
  if (!bytes.empty()) std::memcpy(buffer->mutable_data(), bytes.data(), bytes.size());
  return buffer;
}

std::shared_ptr<Buffer> Buffer::Slice(const std::shared_ptr<Buffer>& parent, int64_t offset, int64_t length) {
  assert(parent != nullptr && RangeInBounds(offset, length, parent->size()));
  return std::make_shared<ViewBuffer>(parent->data() + offset, length, parent);
}

std::shared_ptr<Buffer> Buffer::Wrap(const uint8_t* data, int64_t size_bytes, std::shared_ptr<void> owner) {
  return std::make_shared<ViewBuffer>(data, size_bytes, std::move(owner));
}

std::shared_ptr<Buffer> Buffer::Unowned(const uint8_t* data, int64_t size_bytes) {
  return std::make_shared<ViewBuffer>(data, size_bytes, nullptr);
}

Status Buffer::Resize(int64_t new_size_bytes, bool) {
  return Status::Invalid("cannot resize a view buffer (size " + std::to_string(size_) + " bytes) to " +
                         std::to_string(new_size_bytes) + " bytes");
}

MemoryPool* BufferPool(const Buffer& buffer) {
  const auto* owned = dynamic_cast<const PoolBuffer*>(&buffer);
  return owned != nullptr ? owned->pool() : nullptr;
}

}  // namespace quiver
