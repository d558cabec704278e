// quiver/columnar/take.cc — see take.h.
#include "quiver/columnar/take.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/var_width_output.h"

namespace quiver {
namespace {}  // namespace

GatherKind GatherKindOf(const DataType& type, int32_t* width_bytes) {
  *width_bytes = 0;
  if (IsBinaryLike(type.id)) return GatherKind::kVar32;
  if (IsLargeBinaryLike(type.id)) return GatherKind::kVar64;
  switch (type.id) {
    case TypeId::kNull: return GatherKind::kNull;
    case TypeId::kBool: return GatherKind::kBool;
    case TypeId::kDictionary:
    case TypeId::kBinaryView:
    case TypeId::kUtf8View: return GatherKind::kUnsupported;
    default: break;
  }
  if (IsNested(type.id)) return GatherKind::kUnsupported;
  const int bits = FixedBitWidth(type);
  if (bits <= 0 || bits % 8 != 0) return GatherKind::kUnsupported;
  *width_bytes = bits / 8;
  return GatherKind::kFixed;
}

namespace {

Status NotGatherable(const DataType& type, const std::string& what) {
  return Status::NotImplemented(what + " has type " + type.ToString() +
                                ", which Take cannot gather (supported: null, bool, fixed-width, binary, utf8, "
                                "large_binary, large_utf8)");
}

const uint8_t* BufferData(const ArrayData& a, size_t b) {
  return b < a.buffers.size() && a.buffers[b] ? a.buffers[b]->data() : nullptr;
}

inline int64_t LoadOffset(const uint8_t* offsets, bool large, int64_t i) {
  if (large) return bit_util::LoadLE<int64_t>(offsets + i * 8);
  return bit_util::LoadLE<int32_t>(offsets + i * 4);
}

// A zeroed bitmap of `n` bits (at least one byte).
Result<std::shared_ptr<Buffer>> AllocateBitmap(MemoryPool* pool, int64_t n) {
  return Buffer::AllocateZeroed(pool, std::max<int64_t>(1, bit_util::BytesForBits(n)));
}

std::shared_ptr<ArrayData> NewArray(const DataTypePtr& type, int64_t length) {
  auto out = std::make_shared<ArrayData>();
  out->type = type;
  out->length = length;
  return out;
}

// dst[j] = src[idx[j]] for values of W bytes (zero for a negative index);
// W is a compile-time constant for the common widths, else `w`.
template <int W>
void TakeFixedWidth(uint8_t* dst, const uint8_t* src, const int64_t* idx, int64_t n, int32_t w) {
  const size_t width = W > 0 ? static_cast<size_t>(W) : static_cast<size_t>(w);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t i = idx[j];
    if (i >= 0) {
      std::memcpy(dst + j * static_cast<int64_t>(width), src + i * static_cast<int64_t>(width), width);
    } else {
      std::memset(dst + j * static_cast<int64_t>(width), 0, width);
    }
  }
}

}  // namespace

bool IsGatherable(const DataType& type) {
  int32_t w;
  return GatherKindOf(type, &w) != GatherKind::kUnsupported;
}

Result<ArrayDataPtr> Take(const ArrayData& values, std::span<const int64_t> indices, MemoryPool* pool,
                          const std::string& what, const TakeOptions& options) {
  int32_t w;
  const GatherKind kind = GatherKindOf(*values.type, &w);
  if (kind == GatherKind::kUnsupported) return NotGatherable(*values.type, what);
  const int64_t n = static_cast<int64_t>(indices.size());
  const int64_t* idx = indices.data();
  // One pass: negative indices (nulls) and, with boundscheck, the largest.
  int64_t missing = 0;
  int64_t largest = -1;
  if (options.boundscheck) {
    for (int64_t j = 0; j < n; ++j) {
      missing += idx[j] < 0;
      largest = std::max(largest, idx[j]);
    }
  } else {
    for (int64_t j = 0; j < n; ++j) missing += idx[j] < 0;
  }
  if (largest >= values.length) {
    for (int64_t j = 0; j < n; ++j) {
      if (idx[j] >= values.length) {
        return Status::Invalid(what + ": index " + std::to_string(idx[j]) + " at position " + std::to_string(j) +
                               " is outside the array of " + std::to_string(values.length) + " rows");
      }
    }
  }
  auto out = NewArray(values.type, n);
  if (kind == GatherKind::kNull) {
    out->null_count = n;
    return ArrayDataPtr(out);
  }
  const uint8_t* validity = values.null_count != 0 ? BufferData(values, 0) : nullptr;
  const int64_t base = values.offset;
  std::shared_ptr<Buffer> bitmap;
  int64_t nulls = 0;
  if (missing > 0 || validity) {
    QUIVER_ASSIGN_OR_RETURN(bitmap, AllocateBitmap(pool, n));
    uint8_t* bits = bitmap->mutable_data();
    for (int64_t j = 0; j < n; ++j) {
      const int64_t i = idx[j];
      if (i >= 0 && (!validity || bit_util::GetBit(validity, base + i))) {
        bit_util::SetBit(bits, j);
      } else {
        ++nulls;
      }
    }
  }
  out->null_count = nulls;
  const uint8_t* src_values = BufferData(values, 1);
  switch (kind) {
    case GatherKind::kBool: {
      QUIVER_ASSIGN_OR_RETURN(auto vb, AllocateBitmap(pool, n));
      uint8_t* bits = vb->mutable_data();
      for (int64_t j = 0; j < n; ++j) {
        if (idx[j] >= 0 && bit_util::GetBit(src_values, base + idx[j])) bit_util::SetBit(bits, j);
      }
      out->buffers = {nulls ? bitmap : nullptr, vb};
      break;
    }
    case GatherKind::kFixed: {
      QUIVER_ASSIGN_OR_RETURN(auto vb, Buffer::Allocate(pool, std::max<int64_t>(1, n * w)));
      uint8_t* dst = vb->mutable_data();
      const uint8_t* src = src_values + base * w;
      switch (w) {
        case 1: TakeFixedWidth<1>(dst, src, idx, n, w); break;
        case 2: TakeFixedWidth<2>(dst, src, idx, n, w); break;
        case 4: TakeFixedWidth<4>(dst, src, idx, n, w); break;
        case 8: TakeFixedWidth<8>(dst, src, idx, n, w); break;
        case 16: TakeFixedWidth<16>(dst, src, idx, n, w); break;
        default: TakeFixedWidth<0>(dst, src, idx, n, w); break;
      }
      out->buffers = {nulls ? bitmap : nullptr, vb};
      break;
    }
    case GatherKind::kVar32:
    case GatherKind::kVar64: {
      const bool large = kind == GatherKind::kVar64;
      const char* data = reinterpret_cast<const char*>(BufferData(values, 2));
      auto value_at = [&](int64_t j) -> std::string_view {
        const int64_t i = idx[j];
        if (i < 0 || (validity && !bit_util::GetBit(validity, base + i))) return {};
        const int64_t s = LoadOffset(src_values, large, base + i);
        return {data + s, static_cast<size_t>(LoadOffset(src_values, large, base + i + 1) - s)};
      };
      std::shared_ptr<Buffer> offsets, db;
      QUIVER_RETURN_NOT_OK(BuildVarWidthBuffers(pool, n, large, what, value_at, &offsets, &db));
      out->buffers = {nulls ? bitmap : nullptr, offsets, db};
      break;
    }
    case GatherKind::kNull:  // returned above
    case GatherKind::kUnsupported: break;
  }
  return ArrayDataPtr(out);
}

Result<ArrayDataPtr> Interleave(std::span<const ArrayData* const> sources, std::span<const SourceRow> rows,
                                MemoryPool* pool, const std::string& what) {
  if (sources.empty()) return Status::Invalid(what + ": no arrays to interleave");
  const DataTypePtr& type = sources[0]->type;
  for (size_t s = 1; s < sources.size(); ++s) {
    if (!sources[s]->type->Equals(*type)) {
      return Status::Invalid(what + ": array " + std::to_string(s) + " has type " + sources[s]->type->ToString() +
                             ", array 0 has " + type->ToString());
    }
  }
  int32_t w;
  const GatherKind kind = GatherKindOf(*type, &w);
  if (kind == GatherKind::kUnsupported) return NotGatherable(*type, what);
  const int64_t n = static_cast<int64_t>(rows.size());
  for (int64_t j = 0; j < n; ++j) {
    const SourceRow& r = rows[static_cast<size_t>(j)];
    if (r.source < 0 || static_cast<size_t>(r.source) >= sources.size() || r.row < 0 ||
        r.row >= sources[static_cast<size_t>(r.source)]->length) {
      return Status::Invalid(what + ": row " + std::to_string(r.row) + " of array " + std::to_string(r.source) +
                             " at position " + std::to_string(j) + " is outside the " + std::to_string(sources.size()) +
                             " arrays or that array's rows");
    }
  }
  auto out = NewArray(type, n);
  if (kind == GatherKind::kNull) {
    out->null_count = n;
    return ArrayDataPtr(out);
  }
  // Per source: its validity bitmap (null when it has no null), values
  // buffer and offset.
  struct Src {
    const uint8_t* validity;
    const uint8_t* values;
    const char* data;
    int64_t base;
  };
  std::vector<Src> src(sources.size());
  bool any_validity = false;
  for (size_t s = 0; s < sources.size(); ++s) {
    const ArrayData& a = *sources[s];
    src[s] = {a.null_count != 0 ? BufferData(a, 0) : nullptr, BufferData(a, 1),
              reinterpret_cast<const char*>(BufferData(a, 2)), a.offset};
    any_validity |= src[s].validity != nullptr;
  }
  auto valid = [&](const SourceRow& r) {
    const Src& s = src[static_cast<size_t>(r.source)];
    return !s.validity || bit_util::GetBit(s.validity, s.base + r.row);
  };
  std::shared_ptr<Buffer> bitmap;
  int64_t nulls = 0;
  if (any_validity) {
    QUIVER_ASSIGN_OR_RETURN(bitmap, AllocateBitmap(pool, n));
    uint8_t* bits = bitmap->mutable_data();
    for (int64_t j = 0; j < n; ++j) {
      if (valid(rows[static_cast<size_t>(j)])) {
        bit_util::SetBit(bits, j);
      } else {
        ++nulls;
      }
    }
  }
  out->null_count = nulls;
  switch (kind) {
    case GatherKind::kBool: {
      QUIVER_ASSIGN_OR_RETURN(auto vb, AllocateBitmap(pool, n));
      uint8_t* bits = vb->mutable_data();
      for (int64_t j = 0; j < n; ++j) {
        const SourceRow& r = rows[static_cast<size_t>(j)];
        const Src& s = src[static_cast<size_t>(r.source)];
        if (bit_util::GetBit(s.values, s.base + r.row)) bit_util::SetBit(bits, j);
      }
      out->buffers = {nulls ? bitmap : nullptr, vb};
      break;
    }
    case GatherKind::kFixed: {
      QUIVER_ASSIGN_OR_RETURN(auto vb, Buffer::Allocate(pool, std::max<int64_t>(1, n * w)));
      uint8_t* dst = vb->mutable_data();
      // W: the width as a compile-time constant for the common widths (a
      // plain load and store instead of a memcpy call), else 0.
      auto gather = [&]<int W>() {
        const size_t width = W > 0 ? static_cast<size_t>(W) : static_cast<size_t>(w);
        for (int64_t j = 0; j < n; ++j) {
          const SourceRow& r = rows[static_cast<size_t>(j)];
          const Src& s = src[static_cast<size_t>(r.source)];
          std::memcpy(dst + j * static_cast<int64_t>(width), s.values + (s.base + r.row) * static_cast<int64_t>(width),
                      width);
        }
      };
      switch (w) {
        case 1: gather.template operator()<1>(); break;
        case 2: gather.template operator()<2>(); break;
        case 4: gather.template operator()<4>(); break;
        case 8: gather.template operator()<8>(); break;
        case 16: gather.template operator()<16>(); break;
        default: gather.template operator()<0>(); break;
      }
      out->buffers = {nulls ? bitmap : nullptr, vb};
      break;
    }
    case GatherKind::kVar32:
    case GatherKind::kVar64: {
      const bool large = kind == GatherKind::kVar64;
      auto value_at = [&](int64_t j) -> std::string_view {
        const SourceRow& r = rows[static_cast<size_t>(j)];
        if (!valid(r)) return {};
        const Src& s = src[static_cast<size_t>(r.source)];
        const int64_t b = LoadOffset(s.values, large, s.base + r.row);
        return {s.data + b, static_cast<size_t>(LoadOffset(s.values, large, s.base + r.row + 1) - b)};
      };
      std::shared_ptr<Buffer> offsets, db;
      QUIVER_RETURN_NOT_OK(BuildVarWidthBuffers(pool, n, large, what, value_at, &offsets, &db));
      out->buffers = {nulls ? bitmap : nullptr, offsets, db};
      break;
    }
    case GatherKind::kNull:
    case GatherKind::kUnsupported: break;
  }
  return ArrayDataPtr(out);
}

Result<ArrayDataPtr> MakeArrayOfNull(const DataTypePtr& type, int64_t length, MemoryPool* pool,
                                     const std::string& what) {
  int32_t w;
  const GatherKind kind = GatherKindOf(*type, &w);
  if (kind == GatherKind::kUnsupported) return NotGatherable(*type, what);
  if (length < 0) return Status::Invalid(what + ": negative length " + std::to_string(length));
  auto out = NewArray(type, length);
  out->null_count = length;
  if (kind == GatherKind::kNull) return ArrayDataPtr(out);
  std::shared_ptr<Buffer> bitmap;
  if (length > 0) {
    QUIVER_ASSIGN_OR_RETURN(bitmap, AllocateBitmap(pool, length));
  }
  if (kind == GatherKind::kVar32 || kind == GatherKind::kVar64) {
    // Offsets all 0; one data byte.
    std::shared_ptr<Buffer> offsets, data;
    QUIVER_RETURN_NOT_OK(AllocateVarWidthBuffers(pool, length, kind == GatherKind::kVar64, 0, what, &offsets, &data));
    std::memset(offsets->mutable_data(), 0, static_cast<size_t>(offsets->size()));
    out->buffers = {bitmap, offsets, data};
  } else {
    // Zeroed values: a bitmap for bool, `w` bytes a value for fixed width.
    const int64_t value_bytes = kind == GatherKind::kBool ? bit_util::BytesForBits(length) : length * w;
    QUIVER_ASSIGN_OR_RETURN(auto vb, Buffer::AllocateZeroed(pool, std::max<int64_t>(1, value_bytes)));
    out->buffers = {bitmap, vb};
  }
  return ArrayDataPtr(out);
}

}  // namespace quiver
