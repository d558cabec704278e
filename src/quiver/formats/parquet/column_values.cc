#include "quiver/formats/parquet/column_values.h"

#include <cstring>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/dictionary.h"

namespace quiver::parquet {
namespace {

/// The byte string of value `i` (logical, offset applied here) of a
/// binary-like array.
std::string_view BinaryValue(const ArrayData& a, int64_t i) {
  const int64_t k = a.offset + i;
  const TypeId id = a.type->id;
  if (id == TypeId::kBinaryView || id == TypeId::kUtf8View) {
    // views: {int32 length, 12 inline bytes | 4 prefix bytes, int32 buffer, int32 offset}
    const uint8_t* view = a.buffers[1]->data() + 16 * k;
    int32_t len = 0;
    std::memcpy(&len, view, 4);
    if (len <= 12) return {reinterpret_cast<const char*>(view + 4), static_cast<size_t>(len)};
    int32_t buf = 0, off = 0;
    std::memcpy(&buf, view + 8, 4);
    std::memcpy(&off, view + 12, 4);
    return {reinterpret_cast<const char*>(a.buffers[2 + buf]->data()) + off, static_cast<size_t>(len)};
  }
  const char* data = a.buffers[2] ? reinterpret_cast<const char*>(a.buffers[2]->data()) : "";
  if (id == TypeId::kLargeBinary || id == TypeId::kLargeUtf8) {
    const auto* off = a.GetValues<int64_t>(1);
    return {data + off[k], static_cast<size_t>(off[k + 1] - off[k])};
  }
  const auto* off = a.GetValues<int32_t>(1);
  return {data + off[k], static_cast<size_t>(off[k + 1] - off[k])};
}

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace

Result<ColumnValues> MaterializeColumn(std::span<const ArrayDataPtr> pieces, const LeafMapping& m, MemoryPool* pool) {
  ColumnValues out;
  std::vector<ArrayDataPtr> arrays;
  arrays.reserve(pieces.size());
  for (const ArrayDataPtr& p : pieces) {
    if (m.dictionary_encoded_input) {
      QUIVER_ASSIGN_OR_RETURN(auto decoded, DecodeDictionary(*p, pool, "column '" + m.element.name + "'"));
      arrays.push_back(std::move(decoded));
    } else {
      arrays.push_back(p);
    }
    out.num_rows += arrays.back()->length;
    out.num_values += arrays.back()->length - arrays.back()->null_count;
  }
  const bool optional = m.element.repetition == static_cast<int32_t>(Repetition::kOptional);
  if (!optional && out.num_values != out.num_rows) {
    return Status::Invalid("Parquet writer: column '" + m.element.name + "' is not nullable but holds " +
                           std::to_string(out.num_rows - out.num_values) + " NULLs");
  }
  if (optional) {
    QUIVER_ASSIGN_OR_RETURN(out.def_levels, Buffer::Allocate(pool, out.num_rows));
  }
  const bool binary = m.conversion == ValueConversion::kBinary;
  if (binary) {
    QUIVER_ASSIGN_OR_RETURN(out.views,
                            Buffer::Allocate(pool, out.num_values * static_cast<int64_t>(sizeof(std::string_view)), 8));
  } else {
    QUIVER_ASSIGN_OR_RETURN(out.fixed, Buffer::Allocate(pool, out.num_values * m.width_bytes));
  }
  uint8_t* levels = optional ? out.def_levels->mutable_data() : nullptr;
  uint8_t* fixed = binary ? nullptr : out.fixed->mutable_data();
  auto* views = binary ? reinterpret_cast<std::string_view*>(out.views->mutable_data()) : nullptr;
  const int w = m.width_bytes;
  int64_t row = 0, v = 0;
  for (const ArrayDataPtr& ap : arrays) {
    const ArrayData& a = *ap;
    const DataType& t = *a.type;
    const int src_width = t.id == TypeId::kDecimal                          ? t.bit_width / 8
                          : t.id == TypeId::kFixedSizeBinary                ? t.byte_width
                          : t.id == TypeId::kBool || binary                 ? 0
                          : t.id == TypeId::kInt8 || t.id == TypeId::kUInt8 ? 1
                          : t.id == TypeId::kInt16 || t.id == TypeId::kUInt16 || t.id == TypeId::kFloat16 ? 2
                          : t.id == TypeId::kInt32 || t.id == TypeId::kUInt32 || t.id == TypeId::kFloat32 ||
                                  t.id == TypeId::kDate32 || t.id == TypeId::kTime32
                              ? 4
                              : 8;
    const uint8_t* src =
        (!binary && a.length > 0 && a.buffers.size() > 1 && a.buffers[1]) ? a.buffers[1]->data() : nullptr;
    for (int64_t i = 0; i < a.length; ++i, ++row) {
      const bool valid = a.null_count == 0 || a.IsValid(i);
      if (levels != nullptr) levels[row] = valid ? 1 : 0;
      if (!valid) continue;
      const int64_t k = a.offset + i;
      if (binary) {
        views[v++] = BinaryValue(a, i);
        continue;
      }
      uint8_t* dst = fixed + v * w;
      const uint8_t* s = src + k * src_width;
      switch (m.conversion) {
        case ValueConversion::kBoolean: dst[0] = bit_util::GetBit(src, k) ? 1 : 0; break;
        case ValueConversion::kCopy: std::memcpy(dst, s, static_cast<size_t>(w)); break;
        case ValueConversion::kWidenSigned: {
          const int32_t x = src_width == 1 ? Load<int8_t>(s) : Load<int16_t>(s);
          std::memcpy(dst, &x, 4);
          break;
        }
        case ValueConversion::kWidenUnsigned: {
          const int32_t x = src_width == 1 ? Load<uint8_t>(s) : Load<uint16_t>(s);
          std::memcpy(dst, &x, 4);
          break;
        }
        case ValueConversion::kScale1000: {
          const int64_t x = src_width == 4 ? Load<int32_t>(s) : Load<int64_t>(s);
          int64_t ms = 0;
          if (__builtin_mul_overflow(x, int64_t{1000}, &ms) || (w == 4 && (ms < INT32_MIN || ms > INT32_MAX))) {
            return Status::Invalid("Parquet writer: column '" + m.element.name + "' row " + std::to_string(row) + ": " +
                                   std::to_string(x) + " s does not fit in milliseconds");
          }
          if (w == 4) {
            const int32_t y = static_cast<int32_t>(ms);
            std::memcpy(dst, &y, 4);
          } else {
            std::memcpy(dst, &ms, 8);
          }
          break;
        }
        case ValueConversion::kDate64ToDays: {
          const int64_t ms = Load<int64_t>(s);
          int64_t days = ms / 86400000;
          if (ms % 86400000 < 0) --days;
          if (days < INT32_MIN || days > INT32_MAX) {
            return Status::Invalid("Parquet writer: column '" + m.element.name + "' row " + std::to_string(row) +
                                   ": date64 " + std::to_string(ms) + " ms is outside the INT32 day range");
          }
          const int32_t d = static_cast<int32_t>(days);
          std::memcpy(dst, &d, 4);
          break;
        }
        case ValueConversion::kDecimalToInt:
          // Little-endian two's complement: the low w bytes hold the value
          // (the precision bounds it to INT32 / INT64).
          if (src_width >= w) {
            std::memcpy(dst, s, static_cast<size_t>(w));
          } else {  // decimal32 into INT64: sign-extend
            const int64_t x = Load<int32_t>(s);
            std::memcpy(dst, &x, 8);
          }
          break;
        case ValueConversion::kDecimalToFlba:
          // Big-endian: the low w bytes of the little-endian value, reversed.
          for (int b = 0; b < w; ++b) dst[b] = s[w - 1 - b];
          break;
        case ValueConversion::kBinary: break;
      }
      ++v;
    }
    out.keep_alive.push_back(ap);
  }
  return out;
}

}  // namespace quiver::parquet
