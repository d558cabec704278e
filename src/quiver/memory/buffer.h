// quiver/memory/buffer.h — reference-counted, immutable-by-default byte
// regions (Arrow C++ Buffer). A Buffer either owns a pool allocation
// (released exactly once, when the last reference goes), or is a view that
// keeps its owner alive (a slice of another Buffer, a region of a memory
// mapping).
//
// Thread safety: a Buffer may be read from any thread; mutation through
// mutable_data() / Resize() needs external synchronisation and is only
// meant for the thread that is filling a freshly allocated buffer.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>

#include "quiver/base/result.h"
#include "quiver/memory/memory_pool.h"

namespace quiver {

class Buffer {
 public:
  virtual ~Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  const uint8_t* data() const { return data_; }
  /// Writable pointer; only valid for buffers from Allocate (nullptr for
  /// views of read-only memory).
  uint8_t* mutable_data() { return mutable_ ? const_cast<uint8_t*>(data_) : nullptr; }
  bool is_mutable() const { return mutable_; }
  int64_t size() const { return size_; }
  /// Bytes charged for this buffer's memory (the pool's granted size); 0
  /// for views.
  virtual int64_t capacity_bytes() const { return 0; }
  std::span<const uint8_t> span() const { return {data_, static_cast<size_t>(size_)}; }
  std::string_view view() const { return {reinterpret_cast<const char*>(data_), static_cast<size_t>(size_)}; }
  bool Equals(const Buffer& other) const {
    return size_ == other.size_ && (size_ == 0 || std::memcmp(data_, other.data_, size_) == 0);
  }

  /// A new pool-owned buffer of `size_bytes`, contents uninitialised.
  /// Errors: OutOfMemory from the pool. Nothing is charged on error.
  static Result<std::shared_ptr<Buffer>> Allocate(MemoryPool* pool, int64_t size_bytes, int64_t alignment = 64);
  /// As Allocate, zero-filled.
  static Result<std::shared_ptr<Buffer>> AllocateZeroed(MemoryPool* pool, int64_t size_bytes);
  /// A pool-owned copy of `bytes`.
  static Result<std::shared_ptr<Buffer>> CopyOf(MemoryPool* pool, std::span<const uint8_t> bytes);

  /// A view of `parent` bytes [offset, offset + length); keeps parent alive.
  /// The range must be inside the parent (checked by callers: this asserts).
  static std::shared_ptr<Buffer> Slice(const std::shared_ptr<Buffer>& parent, int64_t offset, int64_t length);

  /// A view of memory kept alive by `owner` (e.g. a memory mapping).
  static std::shared_ptr<Buffer> Wrap(const uint8_t* data, int64_t size_bytes, std::shared_ptr<void> owner);

  /// A view of static or caller-managed memory that outlives the buffer.
  static std::shared_ptr<Buffer> Unowned(const uint8_t* data, int64_t size_bytes);

  /// Resizes a pool-owned buffer (grows: new bytes uninitialised; shrinks:
  /// through the pool's Reallocate, so the capacity follows). Invalid for
  /// views. On error the buffer is unchanged.
  virtual Status Resize(int64_t new_size_bytes, bool shrink_to_fit = true);

 protected:
  Buffer(const uint8_t* data, int64_t size, bool is_mutable) : data_(data), size_(size), mutable_(is_mutable) {}
  const uint8_t* data_;
  int64_t size_;
  bool mutable_;
};

/// The pool each pool-owned buffer keeps alive, or nullptr for views.
MemoryPool* BufferPool(const Buffer& buffer);

}  // namespace quiver
