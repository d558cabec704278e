#include "quiver/columnar/concatenate.h"
#include "quiver/columnar/layout.h"

#include <cstring>
#include <limits>

#include "quiver/base/bit_util.h"

namespace quiver {
namespace {

// Builds a validity bitmap for the concatenation (nullptr when no nulls).
Result<std::shared_ptr<Buffer>> ConcatValidity(const std::vector<ArrayDataPtr>& arrays, int64_t total,
                                               int64_t null_count, MemoryPool* pool) {
  if (null_count == 0) return std::shared_ptr<Buffer>();
  QUIVER_ASSIGN_OR_RETURN(auto out, Buffer::AllocateZeroed(pool, bit_util::BytesForBits(total)));
  int64_t pos = 0;
  for (const auto& a : arrays) {
    if (a->buffers.empty() || a->buffers[0] == nullptr) {
      for (int64_t i = 0; i < a->length; ++i) bit_util::SetBit(out->mutable_data(), pos + i);
    } else {
      bit_util::CopyBitmap(a->buffers[0]->data(), a->offset, a->length, out->mutable_data(), pos);
    }
    pos += a->length;
  }
  return out;
}

// Offsets (rebased) plus either the data bytes or the concatenated child.
template <typename Offset>
Status ConcatBinaryOrList(const std::vector<ArrayDataPtr>& arrays, ArrayData* out, MemoryPool* pool, bool is_list) {
  QUIVER_ASSIGN_OR_RETURN(auto offsets, Buffer::Allocate(pool, (out->length + 1) * int64_t(sizeof(Offset))));
  auto* dst = reinterpret_cast<Offset*>(offsets->mutable_data());
  int64_t row = 0;
  int64_t base = 0;
  std::vector<ArrayDataPtr> child_slices;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  dst[0] = 0;
  for (const auto& a : arrays) {
    const Offset* src = a->GetValues<Offset>(1) + a->offset;
    const int64_t first = a->length ? src[0] : 0;
    const int64_t last = a->length ? src[a->length] : 0;
    for (int64_t i = 0; i < a->length; ++i) {
      const int64_t v = base + (static_cast<int64_t>(src[i + 1]) - first);
      if (v > std::numeric_limits<Offset>::max()) {
        return Status::Invalid("concatenation overflows " + std::to_string(sizeof(Offset) * 8) + "-bit offsets");
      }
      dst[++row] = static_cast<Offset>(v);
    }
    ranges.emplace_back(first, last - first);
    base += last - first;
  }
  out->buffers.push_back(std::move(offsets));
  if (is_list) {
    for (size_t k = 0; k < arrays.size(); ++k) {
      QUIVER_ASSIGN_OR_RETURN(auto s, SliceArray(arrays[k]->children[0], ranges[k].first, ranges[k].second));
      child_slices.push_back(std::move(s));
    }
    QUIVER_ASSIGN_OR_RETURN(auto child, ConcatenateArrays(child_slices, pool));
    out->children.push_back(std::move(child));
  } else {
    QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::Allocate(pool, base));
    int64_t pos = 0;
    for (size_t k = 0; k < arrays.size(); ++k) {
      if (ranges[k].second > 0) {
        std::memcpy(data->mutable_data() + pos, arrays[k]->buffers[2]->data() + ranges[k].first, ranges[k].second);
      }
      pos += ranges[k].second;
    }
    out->buffers.push_back(std::move(data));
  }
  return Status::OK();
}

}  // namespace

Result<ArrayDataPtr> ConcatenateArrays(const std::vector<ArrayDataPtr>& arrays, MemoryPool* pool) {
  if (arrays.empty()) return Status::Invalid("nothing to concatenate");
  const DataType& type = *arrays[0]->type;
  auto out = std::make_shared<ArrayData>();
  out->type = arrays[0]->type;
  for (const auto& a : arrays) {
    if (!a->type->Equals(type)) {
      return Status::Invalid("cannot concatenate " + type.ToString() + " with " + a->type->ToString());
    }
    out->length += a->length;
    out->null_count += a->null_count;
  }
  if (arrays.size() == 1) return arrays[0];
  const DataType& phys = type.id == TypeId::kDictionary ? *type.index_type : type;
  if (type.id == TypeId::kDictionary) {
    for (const auto& a : arrays) {
      if (a->dictionary != arrays[0]->dictionary) {
        return Status::NotImplemented("concatenating dictionary arrays with different dictionaries");
      }
    }
    out->dictionary = arrays[0]->dictionary;
  }
  if (phys.id == TypeId::kNull) return ArrayDataPtr(out);
  QUIVER_ASSIGN_OR_RETURN(auto validity, ConcatValidity(arrays, out->length, out->null_count, pool));
  out->buffers.push_back(std::move(validity));
  // Driven by the layout table: offsets (binary and list-likes), children
  // row for row (struct, fixed-size list), or fixed-width values.
  const TypeLayout layout = LayoutOf(phys);
  const BufferLayout& b1 = layout.buffers[1];
  if (layout.num_buffers >= 2 && b1.kind == BufferKind::kOffsets) {
    const bool into_child = layout.child_rows == ChildRows::kByOffsets;
    QUIVER_RETURN_NOT_OK(b1.element_bits == 64 ? ConcatBinaryOrList<int64_t>(arrays, out.get(), pool, into_child)
                                               : ConcatBinaryOrList<int32_t>(arrays, out.get(), pool, into_child));
    return ArrayDataPtr(out);
  }
  if (layout.has_validity &&
      (layout.child_rows == ChildRows::kSameRows || layout.child_rows == ChildRows::kFixedSize)) {
    const int64_t per = layout.child_rows == ChildRows::kFixedSize ? phys.list_size : 1;
    for (size_t c = 0; c < phys.children.size(); ++c) {
      std::vector<ArrayDataPtr> parts;
      for (const auto& a : arrays) {
        QUIVER_ASSIGN_OR_RETURN(auto s, SliceArray(a->children[c], a->offset * per, a->length * per));
        parts.push_back(std::move(s));
      }
      QUIVER_ASSIGN_OR_RETURN(auto child, ConcatenateArrays(parts, pool));
      out->children.push_back(std::move(child));
    }
    return ArrayDataPtr(out);
  }
  // Views, list views, unions and run-end encoded arrays are not supported.
  const int bits = b1.element_bits;
  if (layout.num_buffers != 2 || b1.kind != BufferKind::kValues || bits <= 0) {
    return Status::NotImplemented("concatenating arrays of type " + type.ToString());
  }
  if (bits == 1) {
    QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::AllocateZeroed(pool, bit_util::BytesForBits(out->length)));
    int64_t pos = 0;
    for (const auto& a : arrays) {
      bit_util::CopyBitmap(a->buffers[1]->data(), a->offset, a->length, data->mutable_data(), pos);
      pos += a->length;
    }
    out->buffers.push_back(std::move(data));
    return ArrayDataPtr(out);
  }
  const int64_t width = bits / 8;
  QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::Allocate(pool, out->length * width));
  int64_t pos = 0;
  for (const auto& a : arrays) {
    if (a->length > 0)
      std::memcpy(data->mutable_data() + pos, a->buffers[1]->data() + a->offset * width, a->length * width);
    pos += a->length * width;
  }
  out->buffers.push_back(std::move(data));
  return ArrayDataPtr(out);
}

}  // namespace quiver
