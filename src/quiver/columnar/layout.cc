// quiver/columnar/layout.cc — the per-type buffer table (layout.h).
#include "quiver/columnar/layout.h"

#include <cstring>

#include "quiver/base/bit_util.h"
#include "quiver/base/checked_math.h"

namespace quiver {
namespace {

constexpr BufferLayout kValidity{BufferKind::kValidity, 1, ByteSwapRule::kNone, "validity"};
constexpr BufferLayout kBytes{BufferKind::kData, 8, ByteSwapRule::kNone, "data"};
constexpr BufferLayout kTypeIds{BufferKind::kTypeIds, 8, ByteSwapRule::kNone, "type ids"};
constexpr BufferLayout kUnionOffsets{BufferKind::kUnionOffsets, 32, ByteSwapRule::k4, "offsets"};
constexpr BufferLayout kViews{BufferKind::kViews, 128, ByteSwapRule::kViews, "views"};

ByteSwapRule SwapForBits(int bits) {
  switch (bits) {
    case 16: return ByteSwapRule::k2;
    case 32: return ByteSwapRule::k4;
    case 64: return ByteSwapRule::k8;
    case 128: return ByteSwapRule::k16;
    case 256: return ByteSwapRule::k32;
    default: return ByteSwapRule::kNone;  // bool, bytes, fixed_size_binary
  }
}

BufferLayout Offsets(BufferKind kind, int bits) {
  return {kind, bits, SwapForBits(bits), kind == BufferKind::kSizes ? "sizes" : "offsets"};
}

TypeLayout Make(std::initializer_list<BufferLayout> buffers) {
  TypeLayout out;
  for (const BufferLayout& b : buffers) out.buffers[static_cast<size_t>(out.num_buffers++)] = b;
  out.has_validity = out.num_buffers > 0 && out.buffers[0].kind == BufferKind::kValidity;
  return out;
}

// The buffers of `type` (child_rows left kNone).
TypeLayout BuffersOf(const DataType& type) {
  switch (type.id) {
    case TypeId::kNull: return Make({});
    case TypeId::kBinary:
    case TypeId::kUtf8: return Make({kValidity, Offsets(BufferKind::kOffsets, 32), kBytes});
    case TypeId::kLargeBinary:
    case TypeId::kLargeUtf8: return Make({kValidity, Offsets(BufferKind::kOffsets, 64), kBytes});
    case TypeId::kBinaryView:
    case TypeId::kUtf8View: {
      TypeLayout out = Make({kValidity, kViews});
      out.variadic_data = true;
      return out;
    }
    case TypeId::kList:
    case TypeId::kMap: return Make({kValidity, Offsets(BufferKind::kOffsets, 32)});
    case TypeId::kLargeList: return Make({kValidity, Offsets(BufferKind::kOffsets, 64)});
    case TypeId::kListView:
      return Make({kValidity, Offsets(BufferKind::kListViewOffsets, 32), Offsets(BufferKind::kSizes, 32)});
    case TypeId::kLargeListView:
      return Make({kValidity, Offsets(BufferKind::kListViewOffsets, 64), Offsets(BufferKind::kSizes, 64)});
    case TypeId::kFixedSizeList:
    case TypeId::kStruct: return Make({kValidity});
    case TypeId::kSparseUnion: return Make({kTypeIds});
    case TypeId::kDenseUnion: return Make({kTypeIds, kUnionOffsets});
    case TypeId::kRunEndEncoded: return Make({});
    case TypeId::kDictionary: return type.index_type ? LayoutOf(*type.index_type) : LayoutOf(*int32());
    case TypeId::kIntervalDayTime:  // two int32 per value
      return Make({kValidity, {BufferKind::kValues, 64, ByteSwapRule::k4, "data"}});
    case TypeId::kIntervalMonthDayNano:
      return Make({kValidity, {BufferKind::kValues, 128, ByteSwapRule::kMonthDayNano, "data"}});
    case TypeId::kBool:
    case TypeId::kFixedSizeBinary:
      return Make({kValidity, {BufferKind::kValues, FixedBitWidth(type), ByteSwapRule::kNone, "data"}});
    default: {
      // Numbers, decimals, dates, times, timestamps, durations, interval year_month.
      const int bits = FixedBitWidth(type);
      return Make({kValidity, {BufferKind::kValues, bits, SwapForBits(bits), "data"}});
    }
  }
}

}  // namespace

TypeLayout LayoutOf(const DataType& type) {
  TypeLayout out = BuffersOf(type);
  out.child_rows = TypeInfoOf(type.id).child_rows;
  return out;
}

int64_t MinBufferBytes(const BufferLayout& buffer, int64_t slots) {
  int64_t elements = slots;
  if (buffer.kind == BufferKind::kData) return 0;
  if (buffer.kind == BufferKind::kOffsets && !CheckedAdd<int64_t>(slots, 1, &elements)) return -1;
  int64_t bits;
  if (!CheckedMul<int64_t>(elements, buffer.element_bits, &bits)) return -1;
  return bit_util::BytesForBits(bits);
}

void ByteSwapBuffer(uint8_t* d, int64_t size, ByteSwapRule rule) {
  switch (rule) {
    case ByteSwapRule::kNone: break;
    case ByteSwapRule::k2: bit_util::ByteSwapElements(d, size / 2, 2); break;
    case ByteSwapRule::k4: bit_util::ByteSwapElements(d, size / 4, 4); break;
    case ByteSwapRule::k8: bit_util::ByteSwapElements(d, size / 8, 8); break;
    case ByteSwapRule::k16: bit_util::ByteSwapElements(d, size / 16, 16); break;
    case ByteSwapRule::k32: bit_util::ByteSwapElements(d, size / 32, 32); break;
    case ByteSwapRule::kMonthDayNano:
      for (int64_t i = 0; i + 16 <= size; i += 16) {
        bit_util::ByteSwapElements(d + i, 2, 4);
        bit_util::ByteSwapElements(d + i + 8, 1, 8);
      }
      break;
    case ByteSwapRule::kViews:
      // Length first; long views (> 12 bytes) also hold a buffer index and
      // an offset (the 4-byte prefix is bytes, not swapped).
      for (int64_t i = 0; i + 16 <= size; i += 16) {
        bit_util::ByteSwapElements(d + i, 1, 4);
        int32_t len;
        std::memcpy(&len, d + i, 4);
        if (len > 12) bit_util::ByteSwapElements(d + i + 8, 2, 4);
      }
      break;
  }
}

std::string_view BufferKindName(BufferKind kind) {
  switch (kind) {
    case BufferKind::kValidity: return "validity";
    case BufferKind::kOffsets: return "offsets";
    case BufferKind::kListViewOffsets: return "list view offsets";
    case BufferKind::kSizes: return "sizes";
    case BufferKind::kValues: return "values";
    case BufferKind::kData: return "data";
    case BufferKind::kTypeIds: return "type ids";
    case BufferKind::kUnionOffsets: return "union offsets";
    case BufferKind::kViews: return "views";
  }
  return "?";
}

}  // namespace quiver
