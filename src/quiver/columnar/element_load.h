// quiver/columnar/element_load.h — unaligned, bounds-unchecked reads of
// integer elements from array buffers. Internal to the columnar layer: the
// callers (slicing, compaction, validation) check the buffer sizes first.
//
// Buffers may come from IPC bodies or memory mappings with any alignment,
// so every read goes through memcpy (compiled to a plain load).
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

#include "quiver/columnar/data_type.h"
#include "quiver/memory/buffer.h"

namespace quiver::columnar_internal {

/// Element `index` (in elements of T) of `buffer`; the caller guarantees
/// (index + 1) * sizeof(T) <= buffer->size().
template <typename T>
inline T LoadElement(const Buffer* buffer, int64_t index) {
  T v;
  std::memcpy(&v, buffer->data() + index * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

/// Element `index` of an integer-typed buffer (`id` one of the integer
/// types), widened to int64. Unsigned 64-bit values above INT64_MAX
/// saturate to INT64_MAX (they are out of range for every index use).
inline int64_t LoadIntegerAsInt64(TypeId id, const Buffer* buffer, int64_t index) {
  switch (id) {
    case TypeId::kInt8: return LoadElement<int8_t>(buffer, index);
    case TypeId::kInt16: return LoadElement<int16_t>(buffer, index);
    case TypeId::kInt32: return LoadElement<int32_t>(buffer, index);
    case TypeId::kInt64: return LoadElement<int64_t>(buffer, index);
    case TypeId::kUInt8: return LoadElement<uint8_t>(buffer, index);
    case TypeId::kUInt16: return LoadElement<uint16_t>(buffer, index);
    case TypeId::kUInt32: return LoadElement<uint32_t>(buffer, index);
    case TypeId::kUInt64: {
      const uint64_t v = LoadElement<uint64_t>(buffer, index);
      return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                 ? std::numeric_limits<int64_t>::max()
                 : static_cast<int64_t>(v);
    }
    default: return 0;
  }
}

/// Byte size of an integer type id (1, 2, 4, 8); 0 for other ids.
inline int IntegerByteWidth(TypeId id) {
  switch (id) {
    case TypeId::kInt8: case TypeId::kUInt8: return 1;
    case TypeId::kInt16: case TypeId::kUInt16: return 2;
    case TypeId::kInt32: case TypeId::kUInt32: return 4;
    case TypeId::kInt64: case TypeId::kUInt64: return 8;
    default: return 0;
  }
}

/// Size of a possibly absent buffer (absent = 0 bytes).
inline int64_t BufferSize(const std::shared_ptr<Buffer>& buffer) {
  return buffer ? buffer->size() : 0;
}

}  // namespace quiver::columnar_internal
