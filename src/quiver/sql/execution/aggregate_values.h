// quiver/sql/execution/aggregate_values.h — the value lists of the
// holistic aggregates (median, percentile_cont, percentile_disc,
// percentile, percentile_approx, string_agg / listagg): every value of a
// group kept, in a chain of chunks taken from its table's ByteArena (pages
// of the "hash aggregate" memory consumer: accounted, on- or off-heap,
// spilled with the group's state). A group's AggregateState holds the
// chain's head (low 64 bits of `i`) and tail (high 64 bits) and the number
// of values (`count`).
//
// A chunk: [next chunk: 8 bytes][capacity: 4][used: 4][values...], read
// and written with memcpy (arena bytes have no alignment). Values: a
// DOUBLE or 64-bit integer in 8 bytes, a DECIMAL's unscaled value in 16, a
// string as a 4-byte length and its bytes (native byte order).
//
// Merging two groups' lists links the second chain after the first (no
// copy, no allocation: ProbeMergeRange runs on several threads over one
// table); the merged-from table's arena must then outlive the merged
// table's emission (HashAggregateNode keeps the workers' tables). A chain
// is always read by its state's count, never to its end: a chunk linked
// into another group's chain by a merge that was then abandoned (the
// parallel merge's OutOfMemory path spills the workers' tables) still ends
// where its own values end.
//
// Thread safety: as the table's (one writer).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "quiver/base/result.h"
#include "quiver/sql/execution/group_table.h"

namespace quiver::sql {

struct AggregateState;

/// How a list stores one value.
enum class ListValueKind : uint8_t {
  kDouble,  ///< 8 bytes: a number as a DOUBLE (median, percentile_cont, percentile)
  kInt64,   ///< 8 bytes: INTEGER, BIGINT, DATE, TIMESTAMP (percentile_disc, percentile_approx)
  kInt128,  ///< 16 bytes: a DECIMAL's unscaled value
  kString,  ///< 4-byte length, then the bytes (string_agg; percentile_disc of VARCHAR)
};

namespace value_chunk {
inline constexpr uint32_t kHeaderBytes = 16;
inline constexpr uint32_t kMinBytes = 64;        // a new group's first chunk at least
inline constexpr uint32_t kMaxBytes = 64 << 10;  // growth doubles up to here (a batch's run may exceed it)
inline uint8_t* Next(const uint8_t* c) {
  uint64_t p;
  std::memcpy(&p, c, 8);
  return reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(p));
}
inline uint32_t Capacity(const uint8_t* c) {
  uint32_t x;
  std::memcpy(&x, c + 8, 4);
  return x;
}
inline uint32_t Used(const uint8_t* c) {
  uint32_t x;
  std::memcpy(&x, c + 12, 4);
  return x;
}
inline void SetNext(uint8_t* c, const uint8_t* next) {
  const auto p = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(next));
  std::memcpy(c, &p, 8);
}
inline void SetUsed(uint8_t* c, uint32_t used) { std::memcpy(c + 12, &used, 4); }
}  // namespace value_chunk

/// The chain of a list state (null when empty).
uint8_t* ListHead(const AggregateState& s);
uint8_t* ListTail(const AggregateState& s);

/// Bytes (header included) of the chunk that appending `bytes` more value
/// bytes to `s` takes from the arena: 0 when its tail chunk has room, else
/// max(bytes, twice the tail's capacity up to 64 KiB, 64) plus the header.
uint64_t ListGrowthBytes(const AggregateState& s, uint64_t bytes);

/// Room for `bytes` value bytes (one or more whole values) at the end of
/// `s`'s chain, counted as used: in its tail chunk, or in a new one of
/// ListGrowthBytes from `arena` (a caller that took that room with
/// EnsureFree cannot fail). The caller writes the values there and adds
/// them to s->count. Errors: OutOfMemory; Invalid past 4 GiB at once.
Result<uint8_t*> ListExtend(ByteArena* arena, AggregateState* s, uint64_t bytes);

/// Links `o`'s chain after `s`'s (either may be empty); counts not added.
void ListLink(AggregateState* s, const AggregateState& o);

/// Bytes of the value at `p` stored as `kind`.
inline uint32_t ListValueBytes(ListValueKind kind, const uint8_t* p) {
  switch (kind) {
    case ListValueKind::kDouble:
    case ListValueKind::kInt64: return 8;
    case ListValueKind::kInt128: return 16;
    case ListValueKind::kString: {
      uint32_t len;
      std::memcpy(&len, p, 4);
      return 4 + len;
    }
  }
  return 8;
}

/// Calls f(p, bytes) for each of `s`'s `s.count` values in order (p: the
/// value as stored, a string's length prefix included).
template <typename F>
void ForEachListValue(const AggregateState& s, int64_t count, ListValueKind kind, F&& f) {
  const uint8_t* c = ListHead(s);
  int64_t left = count;
  while (left > 0 && c != nullptr) {
    const uint8_t* p = c + value_chunk::kHeaderBytes;
    const uint8_t* end = p + value_chunk::Used(c);
    while (p < end && left > 0) {
      const uint32_t b = ListValueBytes(kind, p);
      f(p, b);
      p += b;
      --left;
    }
    c = value_chunk::Next(c);
  }
}

/// The bytes of `s`'s `count` values of `kind` (ForEachListValue's sum).
uint64_t ListBytes(const AggregateState& s, int64_t count, ListValueKind kind);

/// Checks that `bytes` at `p` hold exactly `count` values of `kind`
/// (spilled lists). Errors: Invalid naming `what` (a corrupt spill file).
Status CheckListBytes(ListValueKind kind, const uint8_t* p, uint64_t bytes, int64_t count, const std::string& what);

}  // namespace quiver::sql
