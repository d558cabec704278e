// quiver/join/tagged_index.h — the sparse index shared by the hashed
// relations: open addressing with linear probing over 8-byte slots, each
// a 16-bit tag and a 48-bit row pointer (in the spirit of DuckDB's
// "pointer with salt"; our own layout and probing).
//
//   slot = tag << 48 | row address     (0 = empty)
//
// The key itself lives in the row (RowLayoutOptions::with_int64_key or
// with_key_bytes), so a slot is a quarter of a {key, pointer} pair's cache
// footprint per key at the same load: 8 slots per cache line. The tag (16
// bits of a second hash) rejects all but ~1/65536 of the non-matching
// slots without touching their rows, so a lookup costs one index line plus
// the row it returns. Home positions come from the hash's high bits by
// multiply-shift range reduction (any slot count, no power of two), so
// the index stays at 8 / load_factor bytes per key: 16 B at the default
// load factor 0.5 (unsuccessful probes then scan ~2.5 slots, inside one
// line most of the time).
//
// Layout: `capacity` home positions plus kWindow slots of overflow at the
// end, so that a probe window starting at any home position never wraps;
// probing past the last slot wraps to slot 0. Row addresses must be below
// 2^48 (x86-64 and arm64 user space with 4-level page tables): Fits()
// checks a page before its rows are indexed.
//
// Thread safety: lookups are read-only (any number of threads); inserts
// need exclusive access.
#pragma once

#include <cstdint>

#include "quiver/join/key_hash.h"

namespace quiver::join {

class TaggedIndex {
 public:
  static constexpr uint64_t kPointerMask = (uint64_t{1} << 48) - 1;
  static constexpr int64_t kWindow = 8;

  TaggedIndex() = default;
  /// Uses `slots` (capacity + kWindow zeroed uint64 slots, caller-owned).
  TaggedIndex(uint64_t* slots, int64_t capacity) : slots_(slots), capacity_(capacity), length_(capacity + kWindow) {}

  /// Slots needed for `capacity` home positions.
  static constexpr int64_t SlotsFor(int64_t capacity) { return capacity + kWindow; }
  /// True when [begin, begin + size) can be stored in slots.
  static bool Fits(const uint8_t* begin, int64_t size) {
    return (reinterpret_cast<uint64_t>(begin) + static_cast<uint64_t>(size)) <= kPointerMask;
  }

  static uint64_t TagOf(uint64_t tag_hash) { return (tag_hash & 0xFFFF) << 48; }
  static const uint8_t* RowOf(uint64_t slot) { return reinterpret_cast<const uint8_t*>(slot & kPointerMask); }
  static uint64_t Make(uint64_t tag, const uint8_t* row) { return tag | reinterpret_cast<uint64_t>(row); }

  uint64_t* slots() const { return slots_; }
  int64_t capacity() const { return capacity_; }
  int64_t length() const { return length_; }
  bool empty() const { return slots_ == nullptr; }

  uint64_t Home(uint64_t hash) const { return ReduceToRange(hash, static_cast<uint64_t>(capacity_)); }
  void Prefetch(uint64_t home) const { __builtin_prefetch(slots_ + home); }
  void PrefetchForWrite(uint64_t home) const { __builtin_prefetch(slots_ + home, 1); }
  uint64_t Next(uint64_t i) const { return ++i == static_cast<uint64_t>(length_) ? 0 : i; }

  /// The first row from `home` whose tag matches and for which eq(row) is
  /// true, or nullptr at the first empty slot.
  template <typename Eq>
  const uint8_t* Find(uint64_t home, uint64_t tag, Eq&& eq) const {
    for (uint64_t i = home;; i = Next(i)) {
      const uint64_t s = slots_[i];
      if (s == 0) return nullptr;
      if ((s & ~kPointerMask) == tag && eq(RowOf(s))) return RowOf(s);
    }
  }

  /// Index of the slot holding a matching row, or of the first empty slot
  /// (for inserts).
  template <typename Eq>
  uint64_t FindSlot(uint64_t home, uint64_t tag, Eq&& eq) const {
    for (uint64_t i = home;; i = Next(i)) {
      const uint64_t s = slots_[i];
      if (s == 0 || ((s & ~kPointerMask) == tag && eq(RowOf(s)))) return i;
    }
  }

  /// The first tag match from `home` (no row is touched), or nullptr at an
  /// empty slot; `*at` receives its slot index. For staged lookups: verify
  /// the row afterwards and call Find from *at + 1 on a mismatch (rare).
  const uint8_t* FirstTagMatch(uint64_t home, uint64_t tag, uint64_t* at) const {
    for (uint64_t i = home;; i = Next(i)) {
      const uint64_t s = slots_[i];
      if (s == 0) return nullptr;
      if ((s & ~kPointerMask) == tag) {
        *at = i;
        return RowOf(s);
      }
    }
  }

 private:
  uint64_t* slots_ = nullptr;
  int64_t capacity_ = 0;
  int64_t length_ = 0;
};

/// A second, independent hash of a 64-bit key for tags.
constexpr uint64_t TagHashInt64(int64_t key) {
  uint64_t x = static_cast<uint64_t>(key);
  x ^= x >> 29;
  return (x * 0xD6E8FEB86659FD93ULL) >> 40;
}

}  // namespace quiver::join
