// quiver/sql/execution/group_table.h — the memory of hash aggregation:
// paged arrays and a byte arena whose pages come from a TaskMemoryManager
// (on-heap or off-heap, charged to the aggregate pool), and an
// open-addressing hash table from encoded group keys to dense group
// indices (DuckDB's GroupedAggregateHashTable in miniature: linear
// probing, a 16-bit hash tag per slot, load factor at most 1/2, keys
// compared as bytes).
//
// Thread safety: one thread per table (a parallel aggregation gives each
// thread its own table and merges them).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/join/task_memory_manager.h"

namespace quiver::sql {

/// A growable array of trivially copyable T in fixed pages of the memory
/// manager (elements never move once written).
template <typename T>
class PagedArray {
 public:
  static constexpr int64_t kPageElements = 8192;
  explicit PagedArray(join::MemoryConsumer* consumer) : consumer_(consumer) {}
  int64_t size() const { return size_; }
  T& operator[](int64_t i) {
    return reinterpret_cast<T*>(pages_[static_cast<size_t>(i / kPageElements)].data())[i % kPageElements];
  }
  const T& operator[](int64_t i) const {
    return reinterpret_cast<const T*>(pages_[static_cast<size_t>(i / kPageElements)].data())[i % kPageElements];
  }
  /// Appends `v` (OutOfMemory when a new page cannot be had).
  Status Append(const T& v) {
    if (size_ % kPageElements == 0 && size_ / kPageElements == static_cast<int64_t>(pages_.size())) {
      QUIVER_ASSIGN_OR_RETURN(auto page,
                              consumer_->memory_manager()->AllocatePage(kPageElements * sizeof(T), consumer_));
      pages_.push_back(std::move(page));
    }
    (*this)[size_++] = v;
    return Status::OK();
  }

 private:
  join::MemoryConsumer* consumer_;
  std::vector<join::MemoryPage> pages_;
  int64_t size_ = 0;
};

/// Bytes appended into pages (keys, string aggregate values); returns
/// stable pointers.
class ByteArena {
 public:
  explicit ByteArena(join::MemoryConsumer* consumer) : consumer_(consumer) {}
  Result<uint8_t*> Append(const uint8_t* data, size_t len);
  /// `len` uninitialised bytes, as Append takes them.
  Result<uint8_t*> Allocate(size_t len);
  /// Makes sure the next `len` bytes of Append need no new page (takes one
  /// now if they would), so a caller can fail before it changes anything.
  Status EnsureFree(size_t len);

 private:
  join::MemoryConsumer* consumer_;
  std::vector<join::MemoryPage> pages_;
  int64_t used_ = 0, capacity_ = 0;
};

/// 64-bit hash of a byte string (word at a time, multiply-xorshift mixing).
uint64_t HashBytes(const uint8_t* data, size_t len);

/// A cache from one 64-bit key to its group (open addressing, key and
/// group side by side in one page: one cache miss per lookup), in front of
/// a GroupTable for GROUP BY a single integer / date column.
class IntGroupMap {
 public:
  explicit IntGroupMap(join::MemoryConsumer* consumer) : consumer_(consumer) {}
  /// The group of `key`, or -1.
  int64_t Find(uint64_t key) const {
    if (capacity_ == 0) return -1;
    const uint64_t mask = static_cast<uint64_t>(capacity_ - 1);
    for (uint64_t s = Mix(key) & mask;; s = (s + 1) & mask) {
      const int64_t g = entries_[s].group;
      if (g < 0) return -1;
      if (entries_[s].key == key) return g;
    }
  }
  Status Insert(uint64_t key, int64_t group);
  /// The group of `key`; when absent, `make_group()` (a callable returning
  /// Result<int64_t>) numbers a new one, which is then entered. One probe
  /// for both. Room for the entry is taken before `make_group` runs, so on
  /// OutOfMemory nothing is entered.
  template <typename MakeGroup>
  Status FindOrInsert(uint64_t key, MakeGroup&& make_group, int64_t* group, bool* inserted) {
    if ((size_ + 1) * 2 > capacity_) QUIVER_RETURN_NOT_OK(Grow());
    const uint64_t mask = static_cast<uint64_t>(capacity_ - 1);
    uint64_t s = Mix(key) & mask;
    for (;; s = (s + 1) & mask) {
      const int64_t g = entries_[s].group;
      if (g < 0) break;
      if (entries_[s].key == key) {
        *group = g;
        *inserted = false;
        return Status::OK();
      }
    }
    QUIVER_ASSIGN_OR_RETURN(const int64_t g, make_group());
    entries_[s] = Entry{key, g};
    ++size_;
    *group = g;
    *inserted = true;
    return Status::OK();
  }
  /// Keys entered.
  int64_t size() const { return size_; }
  /// Starts loading the slot where a probe for `key` begins (a caller
  /// probing a list of keys issues this some keys ahead).
  void Prefetch(uint64_t key) const {
    if (capacity_ > 0) __builtin_prefetch(&entries_[Mix(key) & static_cast<uint64_t>(capacity_ - 1)]);
  }
  /// Takes room for `keys` entries now (no growth before them).
  Status Reserve(int64_t keys) { return keys * 2 > capacity_ ? Grow(keys) : Status::OK(); }

 private:
  struct Entry {
    uint64_t key;
    int64_t group;  // -1: empty
  };
  static uint64_t Mix(uint64_t k) {
    k ^= k >> 33;
    k *= 0xFF51AFD7ED558CCDULL;
    k ^= k >> 33;
    return k;
  }
  // Doubles the capacity (at least until `keys` fit at load 1/2).
  Status Grow(int64_t keys = 0);
  join::MemoryConsumer* consumer_;
  join::MemoryPage page_;
  Entry* entries_ = nullptr;
  int64_t capacity_ = 0, size_ = 0;
};

/// Encoded keys to dense group indices 0, 1, 2, ...
class GroupTable {
 public:
  explicit GroupTable(join::MemoryConsumer* consumer);
  /// The group of `key` (inserted with the next index when new).
  Status FindOrInsert(const uint8_t* key, uint32_t len, uint64_t hash, int64_t* group, bool* inserted);
  /// Numbers `key` as a new group without looking it up: for a caller
  /// whose own index (an IntGroupMap holding every group of this table)
  /// says the key is absent. The hash index takes such groups in at the
  /// next FindOrInsert. OutOfMemory leaves no new group.
  Result<int64_t> AppendNew(const uint8_t* key, uint32_t len);
  /// Takes room in the hash index for `groups` groups now.
  Status Reserve(int64_t groups) { return groups * 2 > capacity_ ? Grow(groups) : Status::OK(); }
  /// Whether every group is in the hash index (none numbered by AppendNew
  /// since the last FindOrInsert).
  bool all_indexed() const { return indexed_ == keys_.size(); }
  /// Group `g`'s HashBytes of its key (kept for indexed groups).
  uint64_t hash(int64_t g) const { return g < indexed_ ? keys_[g].hash : HashBytes(keys_[g].data, keys_[g].len); }
  /// The group of `key` (`hash` its HashBytes) among the indexed groups, or
  /// -1. Read-only: several threads at once while nothing writes the table.
  int64_t Find(const uint8_t* key, uint32_t len, uint64_t hash) const;
  /// Starts loading the slot where a lookup of `hash` begins.
  void PrefetchSlot(uint64_t hash) const {
    if (capacity_ > 0) __builtin_prefetch(&slots_[hash & static_cast<uint64_t>(capacity_ - 1)]);
  }
  int64_t num_groups() const { return keys_.size(); }
  const uint8_t* key(int64_t g) const { return keys_[g].data; }
  uint32_t key_length(int64_t g) const { return keys_[g].len; }
  /// Starts loading group `g`'s key reference (Prefetch) or key bytes
  /// (PrefetchKey, once the reference is loaded).
  void Prefetch(int64_t g) const { __builtin_prefetch(&keys_[g]); }
  void PrefetchKey(int64_t g) const { __builtin_prefetch(keys_[g].data); }

 private:
  struct KeyRef {
    const uint8_t* data;
    uint32_t len;
    uint64_t hash;
  };
  // Doubles the slots until `groups` fit at load 1/2 and re-enters the
  // indexed groups.
  Status Grow(int64_t groups);
  // Enters the groups numbered by AppendNew into the slots.
  Status IndexPending();
  join::MemoryConsumer* consumer_;
  ByteArena arena_;
  PagedArray<KeyRef> keys_;
  join::MemoryPage slots_page_;
  uint64_t* slots_ = nullptr;  // 0 = empty; else (tag << 48) | (group + 1)
  int64_t capacity_ = 0;
  int64_t indexed_ = 0;  // groups [0, indexed_) are in the slots
};

}  // namespace quiver::sql
