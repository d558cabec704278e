// quiver/columnar/layout.h — the physical layout of each type: which
// buffers an array of it has, in order, what each buffer holds and how wide
// its elements are, and how its children's rows relate to its own.
//
// This is the one table of the Columnar format's "Buffer Listing for Each
// Layout" in quiver (learned from nanoarrow's ArrowLayout,
// src/nanoarrow/common/utils.c ArrowLayoutInit). The IPC reader and writer,
// validation, compaction and the C Data importer walk it instead of keeping
// their own per-type lists; they keep special cases only for what the table
// cannot say (variadic view buffers, V4 union validity, dictionaries).
//
// Thread safety: pure functions over immutable types.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "quiver/columnar/data_type.h"
#include "quiver/columnar/type_info.h"  // ChildRows

namespace quiver {

/// What one buffer of an array holds.
enum class BufferKind : uint8_t {
  kValidity,         ///< 1 bit per slot, LSB first; absent = all valid
  kOffsets,          ///< slots + 1 offsets (32/64 bits) into the data buffer or the child
  kListViewOffsets,  ///< one offset (32/64 bits) per slot into the child (list views)
  kSizes,            ///< one size (32/64 bits) per slot (list views)
  kValues,           ///< one fixed-width value per slot (element_bits each; bool 1)
  kData,             ///< variable-length bytes addressed by the offsets buffer
  kTypeIds,          ///< one int8 union type code per slot
  kUnionOffsets,     ///< one int32 offset per slot into the selected child (dense union)
  kViews,            ///< one 16-byte view per slot (binary / utf8 view)
};

/// How a buffer's elements are brought from big-endian to native order
/// (Schema.endianness): kN reverses every N-byte element; interval
/// month_day_nano swaps its int32, int32, int64 parts; views swap their
/// length, prefix-free int32 fields (buffer index and offset).
enum class ByteSwapRule : uint8_t { kNone, k2, k4, k8, k16, k32, kMonthDayNano, kViews };

struct BufferLayout {
  BufferKind kind = BufferKind::kValidity;
  /// Bits of one element: validity 1, offsets / sizes 32 or 64, values the
  /// type's FixedBitWidth (bool 1, fixed_size_binary 8 * byte_width), type
  /// ids 8, union offsets 32, views 128; kData 8 (bytes, counted by the
  /// offsets).
  int32_t element_bits = 0;
  ByteSwapRule swap = ByteSwapRule::kNone;
  /// The buffer's role in error messages: "validity", "offsets", "sizes",
  /// "data", "type ids" or "views".
  std::string_view name;
};

struct TypeLayout {
  /// The fixed buffers in ArrayData::buffers / IPC body order; only the
  /// first num_buffers are meaningful.
  std::array<BufferLayout, 3> buffers{};
  int num_buffers = 0;
  /// buffers[0] is a validity bitmap (HasValidityBitmap).
  bool has_validity = false;
  /// View types: any number of variadic data buffers follow the fixed ones
  /// (their count travels in RecordBatch.variadicBufferCounts).
  bool variadic_data = false;
  /// TypeInfoOf(id).child_rows (kNone for dictionaries).
  ChildRows child_rows = ChildRows::kNone;
};

/// The layout of arrays of `type`. Dictionary types have the layout of
/// their index type (the dictionary is not a child); a dictionary without
/// an index type gets int32's. Types whose parameters make no layout
/// (fixed_size_binary with a width over INT32_MAX / 8 bits) get values of
/// 0 bits; validation rejects them before anything reads the buffer.
/// Source: Columnar format, "Buffer Listing for Each Layout" (unions carry
/// no validity bitmap since format version 1.0).
TypeLayout LayoutOf(const DataType& type);

/// Minimum bytes of buffer `buffer` for `slots` slots (offset + length):
/// validity ceil(slots / 8), offsets (slots + 1) elements, values / sizes /
/// list-view offsets / type ids / union offsets / views `slots` elements;
/// kData 0 (its size comes from the last offset). -1 when the byte count
/// overflows int64. `slots` >= 0.
int64_t MinBufferBytes(const BufferLayout& buffer, int64_t slots);

/// Converts `size_bytes` bytes of a buffer laid out as `rule` says from
/// big-endian to native order in place (the rule is its own inverse).
/// Trailing bytes that do not fill an element are left as they are.
void ByteSwapBuffer(uint8_t* data, int64_t size_bytes, ByteSwapRule rule);

/// Short name of a buffer kind ("validity", "offsets", ...), for tests
/// and messages.
std::string_view BufferKindName(BufferKind kind);

}  // namespace quiver
