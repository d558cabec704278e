// quiver/join/key_types.cc — see key_types.h.
#include "quiver/join/key_types.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/element_load.h"
#include "quiver/columnar/type_visit.h"

namespace quiver::join {
namespace {

// The integers whose every value has an int64 equal (all but uint64).
bool IsSmallInteger(TypeId id) { return IsInteger(id) && id != TypeId::kUInt64; }

bool IsUnsignedInteger(TypeId id) { return IsInteger(id) && !IsSignedInteger(id); }

bool IsBytesLike(TypeId id) {
  return id == TypeId::kBinary || id == TypeId::kUtf8 || id == TypeId::kLargeBinary || id == TypeId::kLargeUtf8;
}

inline int64_t LoadOffset(const ArrayData& a, int64_t p) {
  return quiver::LoadOffset(a.buffers[1]->data(), p, IsLargeBinaryLike(a.type->id) ? 64 : 32);
}

}  // namespace

Result<KeyColumnSpec> ResolveKeyPair(const DataType& build, const std::string& build_name, const DataType& probe,
                                     const std::string& probe_name) {
  auto refuse = [&](const std::string& why) {
    return Status::Invalid("key columns '" + build_name + "' (" + build.ToString() + ") and '" + probe_name + "' (" +
                           probe.ToString() + ") cannot be compared" + (why.empty() ? "" : ": " + why));
  };
  const TypeId b = build.id, p = probe.id;
  KeyColumnSpec s;
  if (IsSmallInteger(b) && IsSmallInteger(p)) return s;
  if (b == TypeId::kUInt64 || p == TypeId::kUInt64) {
    if (IsUnsignedInteger(b) && IsUnsignedInteger(p)) return s;
    if (IsInteger(b) && IsInteger(p)) return refuse("uint64 values above INT64_MAX have no signed equal");
    return refuse("");
  }
  if (IsTemporal(b) || IsTemporal(p)) {
    if (b == p && build.unit == probe.unit) return s;
    return refuse("temporal keys need the same type and unit");
  }
  if (IsBytesLike(b) && IsBytesLike(p)) {
    s.key_class = KeyClass::kVarBytes;
    s.width = 4;
    return s;
  }
  if (b != p) return refuse("");
  switch (b) {
    case TypeId::kBool:
      s.key_class = KeyClass::kBool;
      s.width = 1;
      return s;
    case TypeId::kFloat32:
      s.key_class = KeyClass::kFloat32;
      s.width = 4;
      return s;
    case TypeId::kFloat64:
      s.key_class = KeyClass::kFloat64;
      s.width = 8;
      return s;
    case TypeId::kFloat16:
    case TypeId::kDecimal:
    case TypeId::kFixedSizeBinary:
    case TypeId::kIntervalYearMonth:
    case TypeId::kIntervalDayTime:
    case TypeId::kIntervalMonthDayNano:
      if (!build.Equals(probe)) return refuse("the types differ");
      s.key_class = KeyClass::kBytes;
      s.width = FixedBitWidth(build) / 8;
      return s;
    default: return refuse("this type is not supported as a join key");
  }
}

bool LoadsAsInt64(const DataType& type) { return IsInteger(type.id) || IsTemporal(type.id); }

void LoadKeysAsInt64(const ArrayData& a, int64_t begin, int64_t n, int64_t* out) {
  const uint8_t* v = a.buffers[1]->data();
  const int64_t p = a.offset + begin;
  const TypeId id = a.type->id;
  if (!IsInteger(id) && !IsTemporal(id)) {
    std::memset(out, 0, static_cast<size_t>(n) * 8);
    return;
  }
  VisitTypeId(id, [&]<TypeId kId>(TypeIdTag<kId>) {
    using C = typename TypeTraits<kId>::CType;
    if constexpr (std::is_integral_v<C>) {  // (nested: clang 14 evaluates sizeof(void) in a && chain)
      if constexpr (sizeof(C) == 8) {
        // 64-bit keys are copied as bit patterns. For uint64 this is the one
        // deliberate exception to element_load.h's saturation policy: uint64
        // keys meet only unsigned keys (ResolveKeyPair), so reinterpreting the
        // bits as int64 is one-to-one, where saturating would make every key
        // above INT64_MAX equal.
        std::memcpy(out, v + p * 8, static_cast<size_t>(n) * 8);
      } else {
        for (int64_t j = 0; j < n; ++j) out[j] = LoadValue<C>(v, p + j);
      }
    }
  });
}

bool CombineKeyValidity(const std::vector<const ArrayData*>& columns, int64_t begin, int64_t n, uint8_t* valid) {
  std::memset(valid, 1, static_cast<size_t>(n));
  bool any_null = false;
  for (const ArrayData* a : columns) {
    if (a->type->id == TypeId::kNull) {
      std::memset(valid, 0, static_cast<size_t>(n));
      return n > 0;
    }
    if (a->null_count == 0 || a->buffers.empty() || !a->buffers[0]) continue;
    const uint8_t* bits = a->buffers[0]->data();
    const int64_t p = a->offset + begin;
    for (int64_t j = 0; j < n; ++j) {
      const uint8_t b = bit_util::GetBit(bits, p + j);
      valid[j] &= b;
      any_null |= !b;
    }
  }
  return any_null;
}

// ---------------------------------------------------------------- encoder --

KeyEncoder::KeyEncoder(std::vector<KeyColumnSpec> specs) : specs_(std::move(specs)) {
  for (const auto& s : specs_) {
    fixed_bytes_ += s.width;
    if (s.key_class == KeyClass::kVarBytes) fixed_width_ = false;
  }
}

int64_t KeyEncoder::EncodedSize(const std::vector<const ArrayData*>& columns, int64_t i) const {
  if (fixed_width_) return fixed_bytes_;
  int64_t size = fixed_bytes_;
  for (size_t c = 0; c < specs_.size(); ++c) {
    if (specs_[c].key_class != KeyClass::kVarBytes) continue;
    const ArrayData& a = *columns[c];
    const int64_t p = a.offset + i;
    size += LoadOffset(a, p + 1) - LoadOffset(a, p);
  }
  return size;
}

void KeyEncoder::Encode(const std::vector<const ArrayData*>& columns, int64_t i, uint8_t* out) const {
  for (size_t c = 0; c < specs_.size(); ++c) {
    const ArrayData& a = *columns[c];
    const int64_t p = a.offset + i;
    switch (specs_[c].key_class) {
      case KeyClass::kInt64: {
        int64_t v;
        LoadKeysAsInt64(a, i, 1, &v);
        std::memcpy(out, &v, 8);
        out += 8;
        break;
      }
      case KeyClass::kBool: *out++ = bit_util::GetBit(a.buffers[1]->data(), p) ? 1 : 0; break;
      case KeyClass::kFloat32: {
        float v = LoadValue<float>(a.buffers[1]->data(), p);
        if (v == 0.0f) v = 0.0f;
        if (std::isnan(v)) v = std::numeric_limits<float>::quiet_NaN();
        std::memcpy(out, &v, 4);
        out += 4;
        break;
      }
      case KeyClass::kFloat64: {
        double v = LoadValue<double>(a.buffers[1]->data(), p);
        if (v == 0.0) v = 0.0;
        if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();
        std::memcpy(out, &v, 8);
        out += 8;
        break;
      }
      case KeyClass::kBytes: {
        const int32_t w = specs_[c].width;
        std::memcpy(out, a.buffers[1]->data() + p * w, static_cast<size_t>(w));
        out += w;
        break;
      }
      case KeyClass::kVarBytes: {
        const int64_t s = LoadOffset(a, p);
        const uint32_t len = static_cast<uint32_t>(LoadOffset(a, p + 1) - s);
        std::memcpy(out, &len, 4);
        out += 4;
        if (len > 0) std::memcpy(out, a.buffers[2]->data() + s, len);
        out += len;
        break;
      }
    }
  }
}

}  // namespace quiver::join
