// quiver/testing/array_readers.h — element readers and a text rendering of
// arrays (logical index, the array's offset applied), to check slices,
// compactions and round trips against the logical values in tests.
//
// Supports the types the tests build; the array must be valid (these read
// buffers without bounds checks). Thread safety: pure functions.
#pragma once

#include <cstring>
#include <memory>
#include <string>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/array_data.h"
#include "quiver/columnar/value_format.h"

namespace quiver::testing {

// ---- element readers (logical index, offset applied) ----------------------

inline bool IsNull(const ArrayData& a, int64_t i) { return !a.IsValid(i); }

template <typename T>
T ValueAt(const ArrayData& a, int64_t i) {
  T v;
  std::memcpy(&v, a.buffers[1]->data() + (a.offset + i) * sizeof(T), sizeof(T));
  return v;
}

inline bool BoolAt(const ArrayData& a, int64_t i) { return bit_util::GetBit(a.buffers[1]->data(), a.offset + i); }

template <typename O = int32_t>
std::string StringAt(const ArrayData& a, int64_t i) {
  const O begin = ValueAt<O>(a, i);
  const O end = ValueAt<O>(a, i + 1);
  return std::string(reinterpret_cast<const char*>(a.buffers[2]->data()) + begin, static_cast<size_t>(end - begin));
}

std::string RenderValue(const ArrayData& a, int64_t i);

/// "[" + s + "]" (spelled out: GCC 12 warns falsely on the operator+ chain).
inline std::string Bracketed(std::string s) {
  s.insert(s.begin(), '[');
  s.push_back(']');
  return s;
}

/// Renders rows [begin, end) of `a` as "x,y,z" (logical values).
inline std::string RenderRange(const ArrayData& a, int64_t begin, int64_t end) {
  std::string out;
  for (int64_t i = begin; i < end; ++i) {
    if (i > begin) out += ",";
    out += RenderValue(a, i);
  }
  return out;
}

/// Renders a whole array: "a,null,[1,2],{x=1 y=b}" for value comparisons of
/// slices and compactions. Supports the types the tests build.
inline std::string Render(const ArrayData& a) { return RenderRange(a, 0, a.length); }

inline int64_t IntAt(const ArrayData& a, int64_t i) { return IntegerValueAt(a, i); }

inline std::string RenderValue(const ArrayData& a, int64_t i) {
  const TypeId id = a.type->id;
  if (id != TypeId::kRunEndEncoded && !IsUnion(id) && IsNull(a, i)) return "null";
  const int64_t p = a.offset + i;  // physical index
  switch (id) {
    case TypeId::kUtf8: return StringAt<int32_t>(a, i);
    case TypeId::kLargeUtf8: return StringAt<int64_t>(a, i);
    case TypeId::kBool: return BoolAt(a, i) ? "true" : "false";
    case TypeId::kInt8:
    case TypeId::kInt16:
    case TypeId::kInt32:
    case TypeId::kInt64:
    case TypeId::kUInt8:
    case TypeId::kUInt32: return std::to_string(IntAt(a, i));
    case TypeId::kUtf8View:
    case TypeId::kBinaryView: {
      const uint8_t* view = a.buffers[1]->data() + p * 16;
      int32_t size;
      std::memcpy(&size, view, 4);
      if (size <= 12) return std::string(reinterpret_cast<const char*>(view + 4), size);
      int32_t index, off;
      std::memcpy(&index, view + 8, 4);
      std::memcpy(&off, view + 12, 4);
      return std::string(reinterpret_cast<const char*>(a.buffers[2 + index]->data()) + off, size);
    }
    case TypeId::kList:
    case TypeId::kMap:
      return Bracketed(RenderRange(*a.children[0], ValueAt<int32_t>(a, i), ValueAt<int32_t>(a, i + 1)));
    case TypeId::kLargeList:
      return Bracketed(RenderRange(*a.children[0], ValueAt<int64_t>(a, i), ValueAt<int64_t>(a, i + 1)));
    case TypeId::kListView: {
      const int32_t off = ValueAt<int32_t>(a, i);
      int32_t size;
      std::memcpy(&size, a.buffers[2]->data() + p * 4, 4);
      return Bracketed(RenderRange(*a.children[0], off, off + size));
    }
    case TypeId::kFixedSizeList: {
      const int64_t ls = a.type->list_size;
      return Bracketed(RenderRange(*a.children[0], p * ls, (p + 1) * ls));
    }
    case TypeId::kStruct: {
      std::string out = "{";
      for (size_t c = 0; c < a.children.size(); ++c) {
        if (c > 0) out += " ";
        out += a.type->children[c]->name + "=" + RenderValue(*a.children[c], p);
      }
      return out + "}";
    }
    case TypeId::kSparseUnion:
    case TypeId::kDenseUnion: {
      const int8_t code = static_cast<int8_t>(a.buffers[0]->data()[p]);
      size_t c = 0;
      while (a.type->type_codes[c] != code) ++c;
      int64_t child_index = p;
      if (id == TypeId::kDenseUnion) {
        int32_t off;
        std::memcpy(&off, a.buffers[1]->data() + p * 4, 4);
        child_index = off;
      }
      return a.type->children[c]->name + ":" + RenderValue(*a.children[c], child_index);
    }
    case TypeId::kRunEndEncoded: {
      const ArrayData& re = *a.children[0];
      int64_t j = 0;
      while (IntAt(re, j) <= p) ++j;
      return RenderValue(*a.children[1], j);
    }
    case TypeId::kDictionary: {
      std::shared_ptr<ArrayData> indices = std::make_shared<ArrayData>(a);
      indices->type = a.type->index_type;
      return RenderValue(*a.dictionary, IntAt(*indices, i));
    }
    case TypeId::kNull: return "null";
    default: return "?";
  }
}

}  // namespace quiver::testing
