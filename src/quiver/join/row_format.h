// quiver/join/row_format.h — the compact row format of hashed relations,
// and the column <-> row conversions around it.
//
// A row is 8-byte aligned and laid out as
//
//   [next: uint64]            address of the next row with the same key
//                             (0 = end of chain); rows are chained newest
//                             first, so `next` always points to a row
//                             written earlier
//   [ordinal: uint64]         only with RowLayoutOptions::with_ordinal: the
//                             row's 0-based number in write order (indexes
//                             the join's matched bitmaps)
//   [key: int64]              only with with_int64_key: the key of a
//                             LongHashedRelation row in a sparse index (the
//                             index slots hold only a tag and the address)
//   [validity: 8*ceil(n/64)]  only with with_validity: bit i set = field i
//                             valid (LSB first, as Arrow bitmaps)
//   [key slot: 8]             only with with_key_bytes (generic keys): the
//                             encoded key, as a variable-width slot
//   [fixed slots]             one per stored field, natural width, ordered
//                             by decreasing alignment (8, 4, 2, 1) so that
//                             no padding is needed between them
//   [padding to 8]
//   [variable bytes]          values of variable-width fields (and the
//                             encoded key), in field order, then padding to 8
//
// Field slot widths: fixed-width types their byte width (decimal128 16,
// fixed_size_binary N, ...); bool 1 byte (0/1); binary, utf8, large_binary,
// large_utf8 8 bytes = (uint32 offset of the value from the row start,
// uint32 length); the null type 0 bytes. A row is at most 4 GiB - 1.
// Addresses are plain 64-bit pointers: no page-size cap and no row-count
// cap beyond memory. Other types (nested, dictionary, view) are not
// storable: RowLayout::Make answers NotImplemented naming the column.
//
// Thread safety: a RowLayout is immutable; the functions here are pure over
// caller-owned memory.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::join {

/// How a column is stored in a row / gathered into an output array.
enum class FieldKind : uint8_t {
  kNull,   ///< null type: no bytes
  kBool,   ///< one byte 0/1
  kFixed,  ///< `width` bytes
  kVar32,  ///< binary / utf8 (int32 offsets in Arrow)
  kVar64,  ///< large_binary / large_utf8
};

/// The kind of a type, or NotImplemented naming `what` (e.g. "column 'x'")
/// for types rows cannot hold. `*width` receives the slot width.
Status FieldKindOf(const DataType& type, const std::string& what, FieldKind* kind, int32_t* width);

/// One stored field.
struct RowField {
  int column = 0;  ///< index in the source schema
  std::string name;
  DataTypePtr type;
  bool nullable = true;
  FieldKind kind = FieldKind::kFixed;
  int32_t width = 0;        ///< slot bytes
  int32_t slot_offset = 0;  ///< from the row start
};

struct RowLayoutOptions {
  bool with_ordinal = false;
  bool with_validity = false;
  bool with_key_bytes = false;
  bool with_int64_key = false;
};

/// The layout of rows holding chosen columns of a schema. Copyable value.
class RowLayout {
 public:
  RowLayout() = default;
  /// A layout for `columns` (indices into `schema`, each at most once, any
  /// order; may be empty). Errors: Invalid for an index out of range;
  /// NotImplemented for a type rows cannot hold.
  static Result<RowLayout> Make(const Schema& schema, const std::vector<int>& columns, RowLayoutOptions options);

  const std::vector<RowField>& fields() const { return fields_; }
  int num_fields() const { return static_cast<int>(fields_.size()); }
  const RowLayoutOptions& options() const { return options_; }
  /// Bytes of a row without variable-width values (multiple of 8).
  int32_t fixed_bytes() const { return fixed_bytes_; }
  /// True when some stored field (or the key) is variable-width.
  bool has_var() const { return has_var_; }
  int32_t ordinal_offset() const { return 8; }
  /// Offset of the int64 key (with_int64_key), else -1.
  int32_t int64_key_offset() const { return int64_key_offset_; }
  static int64_t LoadInt64(const uint8_t* row, int32_t offset) {
    int64_t v;
    std::memcpy(&v, row + offset, 8);
    return v;
  }
  int32_t validity_offset() const { return validity_offset_; }
  int32_t key_slot_offset() const { return key_slot_offset_; }
  /// Indices (into fields()) of the variable-width fields, in order.
  const std::vector<int>& var_fields() const { return var_fields_; }

  // ---- reading rows ----
  static const uint8_t* Next(const uint8_t* row) {
    uint64_t v;
    std::memcpy(&v, row, 8);
    return reinterpret_cast<const uint8_t*>(v);
  }
  static void SetNext(uint8_t* row, const uint8_t* next) {
    const uint64_t v = reinterpret_cast<uint64_t>(next);
    std::memcpy(row, &v, 8);
  }
  static int64_t Ordinal(const uint8_t* row) {
    int64_t v;
    std::memcpy(&v, row + 8, 8);
    return v;
  }
  bool IsValid(const uint8_t* row, int field) const {
    if (!options_.with_validity) return true;
    return (row[validity_offset_ + (field >> 3)] >> (field & 7)) & 1;
  }
  /// The bytes of variable-width slot at `slot_offset`.
  static std::string_view VarAt(const uint8_t* row, int32_t slot_offset) {
    uint32_t off, len;
    std::memcpy(&off, row + slot_offset, 4);
    std::memcpy(&len, row + slot_offset + 4, 4);
    return {reinterpret_cast<const char*>(row) + off, len};
  }
  /// Total bytes of a row (fixed part, variable bytes, padding).
  int64_t RowSize(const uint8_t* row) const;

  /// A stable text form of the layout (serialization compares it).
  std::string Describe() const;

 private:
  std::vector<RowField> fields_;
  std::vector<int> var_fields_;
  RowLayoutOptions options_;
  int32_t fixed_bytes_ = 8;
  int32_t validity_offset_ = 0;
  int32_t key_slot_offset_ = -1;
  int32_t int64_key_offset_ = -1;
  bool has_var_ = false;
};

/// Sources of one batch's stored columns, resolved once per batch.
/// Holds raw pointers into `batch`, which must outlive it.
class RowSource {
 public:
  /// Errors: Invalid when a column's type differs from the layout's.
  static Result<RowSource> Make(const RowLayout& layout, const RecordBatch& batch);

  /// Variable bytes (rounded to 8) that row `i` of the batch adds to the
  /// fixed part; 0 when the layout has no variable-width fields. Does not
  /// include encoded key bytes.
  int64_t VarBytes(int64_t i) const;
  /// True when any stored column has nulls (needs with_validity).
  bool any_nulls() const { return any_nulls_; }

  /// Writes the stored fields (validity, fixed slots, variable bytes) of
  /// batch rows begin + j into rows[j], for j in [0, n) where rows[j] is
  /// not null. `var_start[j]` is the offset, from the row start, where the
  /// row's variable bytes begin (fixed_bytes(), or after the encoded key);
  /// ignored without variable-width fields. The header and the key slot are
  /// written by the caller.
  void Write(int64_t begin, int64_t n, uint8_t* const* rows, const int64_t* var_start) const;

 private:
  struct Column {
    const ArrayData* array = nullptr;
    const uint8_t* validity = nullptr;  // nullptr = no nulls
    const uint8_t* values = nullptr;    // fixed / bool bits / offsets
    const uint8_t* data = nullptr;      // variable bytes
    int64_t offset = 0;
  };
  const RowLayout* layout_ = nullptr;
  std::vector<Column> columns_;
  bool any_nulls_ = false;
};

/// Gathers field `field` of `rows[0..n)` into a new array of the field's
/// type; a null row pointer gives a null. Buffers come from `pool`.
/// Errors: OutOfMemory; Invalid if 32-bit offsets would overflow.
Result<ArrayDataPtr> GatherField(const RowLayout& layout, int field, const uint8_t* const* rows, int64_t n,
                                 MemoryPool* pool);

/// Bytes one value of a field of this kind/width adds to an output array,
/// not counting variable-width bytes (bitmap bits rounded up): for output
/// batch size bounds.
inline int64_t FixedOutputBytes(FieldKind kind, int32_t width) {
  switch (kind) {
    case FieldKind::kNull: return 0;
    case FieldKind::kBool: return 1;
    case FieldKind::kFixed: return width + 1;
    case FieldKind::kVar32: return 4 + 1;
    case FieldKind::kVar64: return 8 + 1;
  }
  return 0;
}

}  // namespace quiver::join
