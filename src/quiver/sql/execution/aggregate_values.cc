// quiver/sql/execution/aggregate_values.cc — see aggregate_values.h.
#include "quiver/sql/execution/aggregate_values.h"

#include <algorithm>

#include "quiver/sql/execution/aggregate_table.h"

namespace quiver::sql {

uint8_t* ListHead(const AggregateState& s) {
  return reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(static_cast<uint64_t>(s.i)));
}

uint8_t* ListTail(const AggregateState& s) {
  return reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(static_cast<uint64_t>(s.i >> 64)));
}

namespace {

void SetList(AggregateState* s, const uint8_t* head, const uint8_t* tail) {
  const auto h = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(head));
  const auto t = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(tail));
  s->i = static_cast<i128>((static_cast<unsigned __int128>(t) << 64) | h);
}

}  // namespace

uint64_t ListGrowthBytes(const AggregateState& s, uint64_t bytes) {
  const uint8_t* tail = ListTail(s);
  uint64_t grow = value_chunk::kMinBytes;
  if (tail != nullptr) {
    if (value_chunk::Capacity(tail) - value_chunk::Used(tail) >= bytes) return 0;
    grow = std::min<uint64_t>(uint64_t{2} * value_chunk::Capacity(tail), value_chunk::kMaxBytes);
  }
  return value_chunk::kHeaderBytes + std::max<uint64_t>({bytes, grow, value_chunk::kMinBytes});
}

Result<uint8_t*> ListExtend(ByteArena* arena, AggregateState* s, uint64_t bytes) {
  uint8_t* tail = ListTail(*s);
  const uint64_t grow = ListGrowthBytes(*s, bytes);
  if (grow == 0) {
    const uint32_t used = value_chunk::Used(tail);
    value_chunk::SetUsed(tail, used + static_cast<uint32_t>(bytes));
    return tail + value_chunk::kHeaderBytes + used;
  }
  if (grow - value_chunk::kHeaderBytes > UINT32_MAX)
    return Status::Invalid("a group's values of " + std::to_string(bytes) + " bytes at once (at most 4 GiB)");
  QUIVER_ASSIGN_OR_RETURN(uint8_t * chunk, arena->Allocate(grow));
  value_chunk::SetNext(chunk, nullptr);
  const auto capacity = static_cast<uint32_t>(grow - value_chunk::kHeaderBytes);
  std::memcpy(chunk + 8, &capacity, 4);
  value_chunk::SetUsed(chunk, static_cast<uint32_t>(bytes));
  if (tail != nullptr) value_chunk::SetNext(tail, chunk);
  SetList(s, tail != nullptr ? ListHead(*s) : chunk, chunk);
  return chunk + value_chunk::kHeaderBytes;
}

void ListLink(AggregateState* s, const AggregateState& o) {
  uint8_t* ohead = ListHead(o);
  if (ohead == nullptr) return;
  uint8_t* tail = ListTail(*s);
  if (tail == nullptr) {
    s->i = o.i;
    return;
  }
  value_chunk::SetNext(tail, ohead);
  SetList(s, ListHead(*s), ListTail(o));
}

uint64_t ListBytes(const AggregateState& s, int64_t count, ListValueKind kind) {
  uint64_t total = 0;
  ForEachListValue(s, count, kind, [&](const uint8_t*, uint32_t b) { total += b; });
  return total;
}

Status CheckListBytes(ListValueKind kind, const uint8_t* p, uint64_t bytes, int64_t count, const std::string& what) {
  uint64_t at = 0;
  for (int64_t v = 0; v < count; ++v) {
    uint64_t b = kind == ListValueKind::kInt128 ? 16 : 8;
    if (kind == ListValueKind::kString) {
      if (bytes - at < 4) break;
      b = 4 + uint64_t{DecodeU32(p + at)};
    }
    if (b > bytes - at)
      return Status::Invalid(what + ": value " + std::to_string(v) + " of " + std::to_string(count) + " passes the " +
                             std::to_string(bytes) + " bytes");
    at += b;
  }
  if (at != bytes)
    return Status::Invalid(what + ": " + std::to_string(count) + " values take " + std::to_string(at) + " of its " +
                           std::to_string(bytes) + " bytes");
  return Status::OK();
}

}  // namespace quiver::sql
