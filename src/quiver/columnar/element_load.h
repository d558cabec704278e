// quiver/columnar/element_load.h — THE unaligned load of array elements.
//
// Buffers may come from IPC bodies, memory mappings or C Data Interface
// producers with any alignment, so every element read goes through
// bit_util::LoadLE (a memcpy, compiled to a plain load). These helpers do not
// check bounds: callers check buffer sizes first (validation, or their own
// size checks) — the columnar layer, value formatting, join key loading and
// the IPC writer all read elements through them.
//
// uint64 policy (one for the whole tree): a uint64 value read AS INT64
// (LoadIntegerAsInt64) saturates: values above INT64_MAX read as INT64_MAX.
// Every int64 use of such a value is an index, a run end, an offset or a
// dictionary index, for which INT64_MAX is as out of range as the value
// itself, while a wrapped value would turn negative and pass ">= 0 and <
// size" style checks the wrong way round. Callers that need the uint64 bit
// pattern load uint64_t with LoadValue<uint64_t> (value text, join key bytes).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/data_type.h"
#include "quiver/columnar/type_visit.h"
#include "quiver/memory/buffer.h"

namespace quiver {

/// Element `index` (counted in elements of T) of the values at `data`.
/// `data` may be null (an absent buffer): then T{} is returned. Otherwise the
/// caller guarantees (index + 1) * sizeof(T) bytes at `data`.
template <typename T>
inline T LoadValue(const uint8_t* data, int64_t index) {
  if (data == nullptr) return T{};
  return bit_util::LoadLE<T>(data + index * static_cast<int64_t>(sizeof(T)));
}

/// Element `index` of `buffer` (may be null: T{}); the caller guarantees
/// (index + 1) * sizeof(T) <= buffer->size().
template <typename T>
inline T LoadElement(const Buffer* buffer, int64_t index) {
  return LoadValue<T>(buffer ? buffer->data() : nullptr, index);
}

/// Element `index` of the values at `data` of a type whose element is an
/// integer (int8 .. uint64; date32/64, time32/64, timestamp, duration and
/// interval year_month as their storage integer), widened to int64. uint64
/// values above INT64_MAX saturate to INT64_MAX (the policy above). Other
/// type ids, and a null `data`, read as 0.
inline int64_t LoadIntegerAsInt64(TypeId id, const uint8_t* data, int64_t index) {
  return VisitTypeId(id, [&]<TypeId kId>(TypeIdTag<kId>) -> int64_t {
    using C = typename TypeTraits<kId>::CType;
    if constexpr (std::is_same_v<C, uint64_t>) {
      const uint64_t v = LoadValue<uint64_t>(data, index);
      constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
      return v > kMax ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(v);
    } else if constexpr (std::is_integral_v<C> && kId != TypeId::kFloat16) {
      return LoadValue<C>(data, index);
    } else {
      return 0;
    }
  });
}

/// LoadIntegerAsInt64 over a possibly null buffer.
inline int64_t LoadIntegerAsInt64(TypeId id, const Buffer* buffer, int64_t index) {
  return LoadIntegerAsInt64(id, buffer ? buffer->data() : nullptr, index);
}

/// Offset or size `index` of a 32-bit (`bits` 32) or 64-bit (`bits` 64)
/// offsets / sizes buffer at `data`, widened to int64 (the element_bits of
/// a BufferLayout of kind kOffsets, kListViewOffsets or kSizes). `data` may
/// be null (0).
inline int64_t LoadOffset(const uint8_t* data, int64_t index, int bits) {
  return bits == 64 ? LoadValue<int64_t>(data, index) : LoadValue<int32_t>(data, index);
}

/// Byte size of an integer type id (1, 2, 4, 8); 0 for other ids.
inline int IntegerByteWidth(TypeId id) {
  return VisitIntegerType(
      id, []<typename T>() { return static_cast<int>(sizeof(T)); }, [] { return 0; });
}

/// Size of a possibly absent buffer (absent = 0 bytes).
inline int64_t BufferSize(const std::shared_ptr<Buffer>& buffer) { return buffer ? buffer->size() : 0; }

}  // namespace quiver
