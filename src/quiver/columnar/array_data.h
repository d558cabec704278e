// quiver/columnar/array_data.h — the physical form of one array: buffers,
// child arrays and an optional dictionary, exactly in the layout the Arrow
// columnar format defines (Arrow C++ ArrayData, nanoarrow ArrowArray).
//
// Buffers follow NumLayoutBuffers(type) order (validity first where the type
// has one); a validity entry may be nullptr when null_count == 0. View types
// (binary_view, utf8_view) carry their variadic data buffers after the views
// buffer. `offset` is in logical elements and applies to this array's own
// buffers (bitmaps, fixed-width data, offsets, type ids), never to children.
//
// Ownership: ArrayData is shared (std::shared_ptr<const ArrayData>); its
// buffers are reference-counted, so slices and zero-copy views keep the
// memory they point into alive. Immutable after construction; safe to read
// from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "quiver/columnar/data_type.h"
#include "quiver/memory/buffer.h"

namespace quiver {

struct ArrayData;
using ArrayDataPtr = std::shared_ptr<const ArrayData>;

struct ArrayData {
  DataTypePtr type;
  int64_t length = 0;
  /// Number of nulls in [offset, offset + length); for unions and run-end
  /// encoded arrays always 0 (they have no validity bitmap).
  int64_t null_count = 0;
  int64_t offset = 0;
  std::vector<std::shared_ptr<Buffer>> buffers;
  std::vector<ArrayDataPtr> children;
  /// For dictionary-typed arrays: the dictionary values (type value_type).
  ArrayDataPtr dictionary;

  /// Validity bit at logical index i (true when there is no bitmap; always
  /// false for the null type; unions and run-end encoded arrays: true, their
  /// children carry the nulls). No bounds check: 0 <= i < length.
  bool IsValid(int64_t i) const;
  /// Typed pointer into buffer `b` at element 0 (ignores offset).
  template <typename T>
  const T* GetValues(int b) const {
    return buffers[b] ? reinterpret_cast<const T*>(buffers[b]->data()) : nullptr;
  }
  /// Sum of the sizes of all buffers reachable from this array (children and
  /// dictionary included), counting shared buffers each time they appear.
  int64_t TotalBufferBytes() const;
};

/// A logical slice [offset, offset + length) of an array, sharing its
/// buffers (null_count recomputed from the bitmap; for unions and REE 0).
/// Invalid if the range is outside the array.
Result<ArrayDataPtr> SliceArray(const ArrayDataPtr& array, int64_t offset, int64_t length);

/// Returns an equivalent array with offset 0 whose buffers hold only the
/// bytes of its range (bitmaps re-packed, offsets rebased, children trimmed
/// to the referenced range). Returns the input when it already is compact.
/// Used by the IPC writer so that a slice writes only its own bytes.
///
/// Byte-aligned ranges become views (Buffer::Slice) of the input buffers;
/// new buffers (bitmaps at offset % 8 != 0, rebased offsets, rebuilt run
/// ends) come from `pool`. A validity bitmap is dropped when null_count is
/// 0. Per layout: list views and dense unions keep only the child span
/// their entries point into (offsets rebased); run-end encoded arrays keep
/// the runs covering the range (run ends rebuilt relative to it); view
/// types keep all variadic buffers; dictionaries are kept as they are.
/// Errors: Invalid when the array fails structural validation (or an entry
/// read along the way points outside its child); OutOfMemory from `pool`.
/// Thread safety: pure over immutable inputs.
Result<ArrayDataPtr> CompactArray(const ArrayDataPtr& array, MemoryPool* pool);

/// A record batch: a schema and one array per field, all of num_rows rows.
struct RecordBatch {
  SchemaPtr schema;
  int64_t num_rows = 0;
  std::vector<ArrayDataPtr> columns;

  /// Invalid unless the column count, column types and lengths match the schema.
  Status CheckShape() const;
};
using RecordBatchPtr = std::shared_ptr<const RecordBatch>;

/// Rows [offset, offset + length) of a batch, sharing buffers.
Result<RecordBatchPtr> SliceBatch(const RecordBatchPtr& batch, int64_t offset, int64_t length);

}  // namespace quiver
