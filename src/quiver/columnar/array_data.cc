// quiver/columnar/array_data.cc — validity lookups, slicing and compaction
// of arrays, record batch shape checks.
//
// Compaction follows what the Arrow C++ IPC writer does for sliced arrays
// (cpp/src/arrow/ipc/writer.cc: offsets rebased, bitmaps re-packed when the
// offset is not byte aligned, children truncated to the referenced range).
#include "quiver/columnar/array_data.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <utility>

#include "quiver/base/bit_util.h"
#include "quiver/base/checked_math.h"
#include "quiver/columnar/batch_shape.h"
#include "quiver/columnar/element_load.h"
#include "quiver/columnar/layout.h"
#include "quiver/columnar/validate.h"

namespace quiver {

bool ArrayData::IsValid(int64_t i) const {
  if (!type) return true;
  if (type->id == TypeId::kNull) return false;
  if (!HasValidityBitmap(type->id)) return true;
  if (buffers.empty() || !buffers[0]) return true;
  return bit_util::GetBit(buffers[0]->data(), offset + i);
}

int64_t ArrayData::TotalBufferBytes() const {
  int64_t total = 0;
  for (const auto& b : buffers) total += BufferSize(b);
  for (const auto& c : children) {
    if (c) total += c->TotalBufferBytes();
  }
  if (dictionary) total += dictionary->TotalBufferBytes();
  return total;
}

namespace {

/// null_count of [offset, offset + length) of `array`'s layout.
int64_t NullCountOfRange(const ArrayData& array, int64_t offset, int64_t length) {
  const TypeId id = array.type ? array.type->id : TypeId::kNull;
  if (id == TypeId::kNull) return length;
  if (!HasValidityBitmap(id)) return 0;
  if (array.buffers.empty() || !array.buffers[0] || array.null_count == 0) return 0;
  if (offset == array.offset && length == array.length) return array.null_count;
  return length - bit_util::CountSetBits(array.buffers[0]->data(), offset, length);
}

}  // namespace

Result<ArrayDataPtr> SliceArray(const ArrayDataPtr& array, int64_t offset, int64_t length) {
  if (!array) return Status::Invalid("SliceArray: null array");
  if (!RangeInBounds(offset, length, array->length)) {
    return Status::Invalid("SliceArray: range [" + std::to_string(offset) + ", " + std::to_string(offset) + " + " +
                           std::to_string(length) + ") is outside an array of length " + std::to_string(array->length));
  }
  if (offset == 0 && length == array->length) return array;
  auto out = std::make_shared<ArrayData>(*array);
  out->offset = array->offset + offset;
  out->length = length;
  out->null_count = NullCountOfRange(*array, out->offset, length);
  return ArrayDataPtr(std::move(out));
}

// ---- compaction ---------------------------------------------------------------

namespace {

/// A view of bytes [byte_offset, +size_bytes) of `buffer`; the buffer itself
/// when that is all of it. The caller checked the range.
std::shared_ptr<Buffer> SliceBytes(const std::shared_ptr<Buffer>& buffer, int64_t byte_offset, int64_t size_bytes) {
  if (!buffer) return nullptr;
  if (byte_offset == 0 && size_bytes == buffer->size()) return buffer;
  return Buffer::Slice(buffer, byte_offset, size_bytes);
}

/// Bits [bit_offset, +length) of `bitmap` starting at bit 0: a byte-aligned
/// view when bit_offset % 8 == 0, else a re-packed copy from `pool` (the
/// bits after `length` in its last byte are zero).
Result<std::shared_ptr<Buffer>> CompactBitmap(const std::shared_ptr<Buffer>& bitmap, int64_t bit_offset, int64_t length,
                                              MemoryPool* pool) {
  if (!bitmap) return std::shared_ptr<Buffer>();
  const int64_t size_bytes = bit_util::BytesForBits(length);
  if (bit_offset % 8 == 0) return SliceBytes(bitmap, bit_offset / 8, size_bytes);
  QUIVER_ASSIGN_OR_RETURN(auto out, Buffer::AllocateZeroed(pool, size_bytes));
  bit_util::CopyBitmap(bitmap->data(), bit_offset, length, out->mutable_data(), 0);
  return out;
}

/// The data buffer of a fixed-width layout of `bit_width` bits per value.
Result<std::shared_ptr<Buffer>> CompactFixedWidth(const std::shared_ptr<Buffer>& data, int bit_width, int64_t offset,
                                                  int64_t length, MemoryPool* pool) {
  if (bit_width == 1) return CompactBitmap(data, offset, length, pool);
  const int64_t width_bytes = bit_width / 8;
  return SliceBytes(data, offset * width_bytes, length * width_bytes);
}

struct RebasedOffsets {
  std::shared_ptr<Buffer> buffer;
  int64_t first = 0;  ///< original offsets[offset]
  int64_t last = 0;   ///< original offsets[offset + length]
};

/// Offsets [offset, offset + length] of a 32- or 64-bit offsets buffer,
/// rebased to start at 0 (a view when they already do). Length-0 arrays
/// without an offsets buffer stay without one.
template <typename O>
Result<RebasedOffsets> RebaseOffsets(const std::shared_ptr<Buffer>& offsets, int64_t offset, int64_t length,
                                     MemoryPool* pool) {
  RebasedOffsets out;
  constexpr int64_t kWidth = sizeof(O);
  // (offset + length + 1) * kWidth, checked (issue 10 item 5).
  int64_t entries, needed_bytes;
  if (offset < 0 || length < 0 || !CheckedAdd<int64_t>(offset, length, &entries) ||
      !CheckedAdd<int64_t>(entries, 1, &entries) || !CheckedMul<int64_t>(entries, kWidth, &needed_bytes)) {
    return Status::Invalid("CompactArray: offset " + std::to_string(offset) + " + length " + std::to_string(length) +
                           " overflows the offsets buffer size");
  }
  if (length == 0 && BufferSize(offsets) < needed_bytes) {
    out.buffer = BufferSize(offsets) == 0 ? offsets : nullptr;
    return out;
  }
  if (BufferSize(offsets) < needed_bytes) {
    return Status::Invalid("CompactArray: offsets buffer too small");
  }
  out.first = LoadElement<O>(offsets.get(), offset);
  out.last = LoadElement<O>(offsets.get(), offset + length);
  if (out.first < 0 || out.last < out.first) {
    return Status::Invalid("CompactArray: offsets " + std::to_string(out.first) + ".." + std::to_string(out.last) +
                           " are not a valid range");
  }
  if (out.first == 0) {
    out.buffer = SliceBytes(offsets, offset * kWidth, (length + 1) * kWidth);
    return out;
  }
  QUIVER_ASSIGN_OR_RETURN(out.buffer, Buffer::Allocate(pool, (length + 1) * kWidth));
  uint8_t* dst = out.buffer->mutable_data();
  for (int64_t i = 0; i <= length; ++i) {
    const O v = static_cast<O>(LoadElement<O>(offsets.get(), offset + i) - out.first);
    std::memcpy(dst + i * kWidth, &v, kWidth);
  }
  return out;
}

Result<ArrayDataPtr> CompactImpl(const ArrayDataPtr& array, MemoryPool* pool);

/// Compacts rows [offset, +length) of `child`.
Result<ArrayDataPtr> CompactChildRange(const ArrayDataPtr& child, int64_t offset, int64_t length, MemoryPool* pool) {
  QUIVER_ASSIGN_OR_RETURN(auto sliced, SliceArray(child, offset, length));
  return CompactImpl(sliced, pool);
}

/// Offsets-based variable-size layouts: binary (data buffer) and list/map
/// (child array).
template <typename O>
Status CompactOffsetsLayout(const ArrayData& in, ArrayData* out, MemoryPool* pool) {
  QUIVER_ASSIGN_OR_RETURN(auto rebased, RebaseOffsets<O>(in.buffers[1], in.offset, in.length, pool));
  out->buffers[1] = rebased.buffer;
  const int64_t span = rebased.last - rebased.first;
  if (in.type->id == TypeId::kList || in.type->id == TypeId::kLargeList || in.type->id == TypeId::kMap) {
    QUIVER_ASSIGN_OR_RETURN(out->children[0], CompactChildRange(in.children[0], rebased.first, span, pool));
  } else {
    if (rebased.last > BufferSize(in.buffers[2])) {
      return Status::Invalid("CompactArray: last offset " + std::to_string(rebased.last) +
                             " is past the data buffer end " + std::to_string(BufferSize(in.buffers[2])));
    }
    out->buffers[2] = SliceBytes(in.buffers[2], rebased.first, span);
  }
  return Status::OK();
}

/// List views: the child is trimmed to the span the non-empty views cover
/// and the offsets rebased onto it; sizes are sliced.
template <typename O>
Status CompactListView(const ArrayData& in, ArrayData* out, MemoryPool* pool) {
  constexpr int64_t kWidth = sizeof(O);
  const Buffer* offsets = in.buffers[1].get();
  const Buffer* sizes = in.buffers[2].get();
  const int64_t child_length = in.children[0]->length;
  int64_t min_offset = std::numeric_limits<int64_t>::max();
  int64_t max_end = 0;
  for (int64_t i = in.offset; i < in.offset + in.length; ++i) {
    const int64_t off = LoadElement<O>(offsets, i);
    const int64_t size = LoadElement<O>(sizes, i);
    if (size == 0) continue;
    if (off < 0 || size < 0 || off > child_length - size) {
      return Status::Invalid("CompactArray: list view " + std::to_string(i) + " (offset " + std::to_string(off) +
                             ", size " + std::to_string(size) + ") is outside the child of length " +
                             std::to_string(child_length));
    }
    min_offset = std::min(min_offset, off);
    max_end = std::max(max_end, off + size);
  }
  if (min_offset > max_end) min_offset = max_end = 0;  // no non-empty views
  const int64_t new_child_length = max_end - min_offset;
  QUIVER_ASSIGN_OR_RETURN(out->children[0], CompactChildRange(in.children[0], min_offset, new_child_length, pool));
  out->buffers[2] = SliceBytes(in.buffers[2], in.offset * kWidth, in.length * kWidth);
  // New offsets; empty views are clamped into the new child.
  bool unchanged = true;
  std::vector<O> rebased(static_cast<size_t>(in.length));
  for (int64_t i = 0; i < in.length; ++i) {
    const int64_t off = LoadElement<O>(offsets, in.offset + i);
    const int64_t size = LoadElement<O>(sizes, in.offset + i);
    int64_t v = off - min_offset;
    if (size == 0) v = std::clamp<int64_t>(v, 0, new_child_length);
    rebased[static_cast<size_t>(i)] = static_cast<O>(v);
    unchanged = unchanged && v == off;
  }
  if (unchanged) {
    out->buffers[1] = SliceBytes(in.buffers[1], in.offset * kWidth, in.length * kWidth);
  } else {
    QUIVER_ASSIGN_OR_RETURN(out->buffers[1], Buffer::CopyOf(pool, {reinterpret_cast<const uint8_t*>(rebased.data()),
                                                                   static_cast<size_t>(in.length * kWidth)}));
  }
  return Status::OK();
}

/// Dense unions: type ids sliced; each child trimmed to the span of offsets
/// that point into it, and the offsets rebased.
Status CompactDenseUnion(const ArrayData& in, ArrayData* out, MemoryPool* pool) {
  const DataType& type = *in.type;
  std::array<int, 128> child_of_code;
  child_of_code.fill(-1);
  for (size_t c = 0; c < type.type_codes.size(); ++c) {
    const int8_t code = type.type_codes[c];
    if (code >= 0) child_of_code[static_cast<size_t>(code)] = static_cast<int>(c);
  }
  const size_t num_children = in.children.size();
  std::vector<int64_t> min_off(num_children, std::numeric_limits<int64_t>::max());
  std::vector<int64_t> max_off(num_children, -1);
  const Buffer* ids = in.buffers[0].get();
  const Buffer* offsets = in.buffers[1].get();
  for (int64_t i = in.offset; i < in.offset + in.length; ++i) {
    const int8_t code = LoadElement<int8_t>(ids, i);
    const int c = code >= 0 ? child_of_code[static_cast<size_t>(code)] : -1;
    if (c < 0 || static_cast<size_t>(c) >= num_children) {
      return Status::Invalid("CompactArray: undeclared union type id " + std::to_string(code) + " at index " +
                             std::to_string(i));
    }
    const int64_t off = LoadElement<int32_t>(offsets, i);
    if (off < 0 || off >= in.children[static_cast<size_t>(c)]->length) {
      return Status::Invalid("CompactArray: dense union offset " + std::to_string(off) + " at index " +
                             std::to_string(i) + " is outside child " + std::to_string(c));
    }
    min_off[static_cast<size_t>(c)] = std::min(min_off[static_cast<size_t>(c)], off);
    max_off[static_cast<size_t>(c)] = std::max(max_off[static_cast<size_t>(c)], off);
  }
  bool rebase_needed = false;
  for (size_t c = 0; c < num_children; ++c) {
    int64_t start = 0;
    int64_t count = 0;
    if (max_off[c] >= 0) {
      start = min_off[c];
      count = max_off[c] - min_off[c] + 1;
    }
    rebase_needed = rebase_needed || start != 0;
    QUIVER_ASSIGN_OR_RETURN(out->children[c], CompactChildRange(in.children[c], start, count, pool));
  }
  out->buffers[0] = SliceBytes(in.buffers[0], in.offset, in.length);
  if (!rebase_needed) {
    out->buffers[1] = SliceBytes(in.buffers[1], in.offset * 4, in.length * 4);
    return Status::OK();
  }
  QUIVER_ASSIGN_OR_RETURN(out->buffers[1], Buffer::Allocate(pool, in.length * 4));
  uint8_t* dst = out->buffers[1]->mutable_data();
  for (int64_t i = 0; i < in.length; ++i) {
    const int8_t code = LoadElement<int8_t>(ids, in.offset + i);
    const size_t c = static_cast<size_t>(child_of_code[static_cast<size_t>(code)]);
    const int32_t v = static_cast<int32_t>(LoadElement<int32_t>(offsets, in.offset + i) - min_off[c]);
    std::memcpy(dst + i * 4, &v, 4);
  }
  return Status::OK();
}

/// Run-end encoded: the runs that cover [offset, offset + length) are found
/// by binary search; run ends are rebuilt relative to the slice (the last one
/// clamped to its length) and the values trimmed to those runs.
Status CompactRunEndEncoded(const ArrayData& in, ArrayData* out, MemoryPool* pool) {
  const ArrayData& run_ends = *in.children[0];
  const TypeId re_id = run_ends.type->id;
  const int width = IntegerByteWidth(re_id);
  const Buffer* re_data = run_ends.buffers.size() > 1 ? run_ends.buffers[1].get() : nullptr;
  const int64_t num_runs = run_ends.length;
  if (num_runs > 0 && (re_data == nullptr || re_data->size() < (run_ends.offset + num_runs) * width)) {
    return Status::Invalid("CompactArray: run ends buffer too small");
  }
  auto run_end_at = [&](int64_t j) { return LoadIntegerAsInt64(re_id, re_data, run_ends.offset + j); };
  const int64_t begin = in.offset;
  const int64_t end = in.offset + in.length;
  int64_t first_run = 0;
  int64_t count = 0;
  if (in.length > 0) {
    // First run whose end is past `begin`, then the first whose end reaches `end`.
    int64_t lo = 0, hi = num_runs;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (run_end_at(mid) > begin)
        hi = mid;
      else
        lo = mid + 1;
    }
    first_run = lo;
    lo = first_run;
    hi = num_runs;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (run_end_at(mid) >= end)
        hi = mid;
      else
        lo = mid + 1;
    }
    if (lo >= num_runs) {
      return Status::Invalid("CompactArray: run ends do not cover the array end " + std::to_string(end));
    }
    count = lo - first_run + 1;
  }
  const bool unchanged =
      begin == 0 && first_run == 0 && count == num_runs && (count == 0 || run_end_at(count - 1) == end);
  if (unchanged) {
    QUIVER_ASSIGN_OR_RETURN(out->children[0], CompactImpl(in.children[0], pool));
  } else {
    QUIVER_ASSIGN_OR_RETURN(auto buffer, Buffer::Allocate(pool, count * width));
    uint8_t* dst = buffer->mutable_data();
    for (int64_t k = 0; k < count; ++k) {
      const int64_t v = std::min(run_end_at(first_run + k), end) - begin;
      VisitIntegerType(
          re_id, [&]<typename T>() { bit_util::StoreLE<T>(dst + k * width, static_cast<T>(v)); }, [] {});
    }
    auto re = std::make_shared<ArrayData>();
    re->type = run_ends.type;
    re->length = count;
    re->buffers = {nullptr, std::move(buffer)};
    out->children[0] = std::move(re);
  }
  QUIVER_ASSIGN_OR_RETURN(out->children[1], CompactChildRange(in.children[1], first_run, count, pool));
  return Status::OK();
}

Result<ArrayDataPtr> CompactImpl(const ArrayDataPtr& array, MemoryPool* pool) {
  const ArrayData& in = *array;
  const DataType& type = *in.type;
  auto out = std::make_shared<ArrayData>(in);
  out->offset = 0;
  const int64_t o = in.offset;
  const int64_t n = in.length;

  const TypeLayout layout = LayoutOf(type);
  if (layout.has_validity && !in.buffers.empty()) {
    if (in.null_count == 0) {
      out->buffers[0] = nullptr;
    } else {
      QUIVER_ASSIGN_OR_RETURN(out->buffers[0], CompactBitmap(in.buffers[0], o, n, pool));
    }
  }

  // Driven by the layout table: the second buffer's kind and how the
  // children's rows follow the parent's.
  const BufferLayout& b1 = layout.buffers[1];
  const bool wide = b1.element_bits == 64;
  switch (layout.child_rows) {
    case ChildRows::kNone:
      if (layout.num_buffers < 2) break;      // null
      if (b1.kind == BufferKind::kOffsets) {  // binary, utf8 and large forms
        QUIVER_RETURN_NOT_OK(wide ? CompactOffsetsLayout<int64_t>(in, out.get(), pool)
                                  : CompactOffsetsLayout<int32_t>(in, out.get(), pool));
      } else if (b1.kind == BufferKind::kViews) {
        // Variadic data buffers are kept whole: views point anywhere into them.
        out->buffers[1] = SliceBytes(in.buffers[1], o * 16, n * 16);
      } else {
        // Fixed-width layouts, dictionary indices included (the dictionary
        // is kept as is: indices refer to all of it).
        QUIVER_ASSIGN_OR_RETURN(out->buffers[1], CompactFixedWidth(in.buffers[1], b1.element_bits, o, n, pool));
      }
      break;
    case ChildRows::kByOffsets:
      QUIVER_RETURN_NOT_OK(wide ? CompactOffsetsLayout<int64_t>(in, out.get(), pool)
                                : CompactOffsetsLayout<int32_t>(in, out.get(), pool));
      break;
    case ChildRows::kByListViews:
      QUIVER_RETURN_NOT_OK(wide ? CompactListView<int64_t>(in, out.get(), pool)
                                : CompactListView<int32_t>(in, out.get(), pool));
      break;
    case ChildRows::kFixedSize: {
      const int64_t ls = type.list_size;
      QUIVER_ASSIGN_OR_RETURN(out->children[0], CompactChildRange(in.children[0], o * ls, n * ls, pool));
      break;
    }
    case ChildRows::kSameRows:  // struct, sparse union (its type ids sliced)
      if (layout.buffers[0].kind == BufferKind::kTypeIds) out->buffers[0] = SliceBytes(in.buffers[0], o, n);
      for (size_t c = 0; c < in.children.size(); ++c) {
        QUIVER_ASSIGN_OR_RETURN(out->children[c], CompactChildRange(in.children[c], o, n, pool));
      }
      break;
    case ChildRows::kByUnionOffsets: QUIVER_RETURN_NOT_OK(CompactDenseUnion(in, out.get(), pool)); break;
    case ChildRows::kByRunEnds: QUIVER_RETURN_NOT_OK(CompactRunEndEncoded(in, out.get(), pool)); break;
  }

  if (o == 0 && out->buffers == in.buffers && out->children == in.children) return array;
  return ArrayDataPtr(std::move(out));
}

}  // namespace

Result<ArrayDataPtr> CompactArray(const ArrayDataPtr& array, MemoryPool* pool) {
  if (!array) return Status::Invalid("CompactArray: null array");
  // The structural checks make every read below (first/last offsets, run
  // ends, child ranges) land inside the buffers.
  QUIVER_RETURN_NOT_OK_CTX(ValidateArray(*array, ValidationLevel::kStructural, "array"), "CompactArray");
  return CompactImpl(array, pool);
}

// ---- record batches --------------------------------------------------------------

Status RecordBatch::CheckShape() const {
  if (!schema) return Status::Invalid("record batch has no schema");
  if (num_rows < 0) {
    return Status::Invalid("record batch num_rows " + std::to_string(num_rows) + " is negative");
  }
  const BatchShapeMismatch shape = FindBatchShapeMismatch(*schema, *this);
  if (shape.ok()) return Status::OK();
  if (shape.kind == BatchShapeMismatch::Kind::kColumnCount) {
    return Status::Invalid("record batch has " + std::to_string(columns.size()) + " columns, the schema " +
                           std::to_string(schema->fields.size()) + " fields");
  }
  const size_t i = static_cast<size_t>(shape.column);
  const FieldPtr& f = schema->fields[i];
  const ArrayDataPtr& c = columns[i];
  const std::string where = "column " + std::to_string(i) + (f ? " '" + f->name + "'" : "");
  if (!f || !f->type) return Status::Invalid(where + ": schema field has no type");
  if (!c || !c->type) return Status::Invalid(where + ": no array");
  if (shape.kind == BatchShapeMismatch::Kind::kType) {
    return Status::Invalid(where + ": array type " + c->type->ToString() + " does not match the schema type " +
                           f->type->ToString());
  }
  return Status::Invalid(where + ": length " + std::to_string(c->length) + " does not match the batch's " +
                         std::to_string(num_rows) + " rows");
}

Result<RecordBatchPtr> SliceBatch(const RecordBatchPtr& batch, int64_t offset, int64_t length) {
  if (!batch) return Status::Invalid("SliceBatch: null batch");
  if (!RangeInBounds(offset, length, batch->num_rows)) {
    return Status::Invalid("SliceBatch: range [" + std::to_string(offset) + ", " + std::to_string(offset) + " + " +
                           std::to_string(length) + ") is outside a batch of " + std::to_string(batch->num_rows) +
                           " rows");
  }
  auto out = std::make_shared<RecordBatch>();
  out->schema = batch->schema;
  out->num_rows = length;
  out->columns.reserve(batch->columns.size());
  for (size_t i = 0; i < batch->columns.size(); ++i) {
    QUIVER_ASSIGN_OR_RETURN(auto column, SliceArray(batch->columns[i], offset, length));
    out->columns.push_back(std::move(column));
  }
  return RecordBatchPtr(std::move(out));
}

}  // namespace quiver
