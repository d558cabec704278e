// quiver/formats/csv/csv_pool_array.h — a growable array of trivially
// copyable values held in one pool buffer: the CSV parse's scratch (the
// field positions of a range or block, about 24 bytes a field: several MiB
// per thread), charged to the pool that the scan was given instead of the
// general heap.
//
// Memory: one buffer from the pool given at construction, grown by
// doubling (the pool reserves before it allocates: an array that would
// pass the pool's limit is an OutOfMemory from push_back, never an
// allocation past it); clear() keeps the capacity, so an array reused
// between ranges faults no new pages; the bytes go back to the pool when
// the array is destroyed.
//
// Thread safety: none (one thread uses an array at a time).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "quiver/base/result.h"
#include "quiver/memory/buffer.h"

namespace quiver::formats::csv {

template <typename T>
class PoolArray {
  static_assert(std::is_trivially_copyable_v<T>, "PoolArray holds trivially copyable values");

 public:
  /// `pool` must outlive the array (the buffer keeps it alive).
  explicit PoolArray(MemoryPool* pool) : pool_(pool) {}

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T* data() const { return data_; }
  const T& operator[](size_t i) const { return data_[i]; }
  /// Bytes charged for the array now (its capacity).
  int64_t capacity_bytes() const { return buf_ ? buf_->capacity_bytes() : 0; }

  /// Appends `v`. Errors: OutOfMemory from the pool (the array unchanged).
  Status push_back(const T& v) {
    if (size_ == capacity_) [[unlikely]] {
      QUIVER_RETURN_NOT_OK(Grow(size_ + 1));
    }
    data_[size_++] = v;
    return Status::OK();
  }
  /// Drops the values from `n` on (n <= size()); keeps the capacity.
  void truncate(size_t n) { size_ = std::min(size_, n); }
  void clear() { size_ = 0; }

 private:
  Status Grow(size_t want) {
    const size_t cap = std::max<size_t>({want, capacity_ * 2, 1024 / sizeof(T)});
    const auto bytes = static_cast<int64_t>(cap * sizeof(T));
    if (!buf_) {
      QUIVER_ASSIGN_OR_RETURN(buf_, Buffer::Allocate(pool_, bytes));
    } else {
      QUIVER_RETURN_NOT_OK(buf_->Resize(bytes, false));
    }
    data_ = reinterpret_cast<T*>(buf_->mutable_data());
    capacity_ = cap;
    return Status::OK();
  }

  MemoryPool* pool_;
  std::shared_ptr<Buffer> buf_;
  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace quiver::formats::csv
