// quiver/integration/json_value.cc — see json_value_internal.h.
#include "quiver/integration/json_value_internal.h"

#include <cstring>
#include <type_traits>

#include "quiver/base/bit_util.h"
#include "quiver/columnar/type_visit.h"

namespace quiver::integration {

const Json* Member(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

Status Err(const std::string& path, const std::string& msg) { return Status::Invalid(path + ": " + msg); }

/// A short rendering of a JSON value for messages (containers by kind only:
/// dumping a deeply nested value would recurse without bound).
std::string Brief(const Json& v) {
  if (v.is_array()) return "<array>";
  if (v.is_object()) return "<object>";
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 60) + "...";
  return s;
}

bool ToInt64(const Json& v, int64_t* out) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  if (v.is_number_integer()) {
    *out = v.get<int64_t>();
    return true;
  }
  if (v.is_string()) return IntegerFromString(v.get_ref<const std::string&>(), out);
  return false;
}

bool ToUInt64(const Json& v, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer()) {
    const int64_t x = v.get<int64_t>();
    if (x < 0) return false;
    *out = static_cast<uint64_t>(x);
    return true;
  }
  if (v.is_string()) return IntegerFromString(v.get_ref<const std::string&>(), out);
  return false;
}

bool ToDouble(const Json& v, double* out) {
  if (v.is_number()) {
    *out = v.get<double>();
    return true;
  }
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "NaN" || s == "nan" || s == "-NaN") {
      *out = std::numeric_limits<double>::quiet_NaN();
      return true;
    }
    if (s == "Infinity" || s == "inf" || s == "+inf" || s == "Inf") {
      *out = std::numeric_limits<double>::infinity();
      return true;
    }
    if (s == "-Infinity" || s == "-inf" || s == "-Inf") {
      *out = -std::numeric_limits<double>::infinity();
      return true;
    }
  }
  return false;
}

namespace {

int HexNibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

/// Decodes an even-length hex string into out[0, hex.size()/2).
bool HexDecode(std::string_view hex, uint8_t* out) {
  if (hex.size() % 2 != 0) return false;
  for (size_t k = 0; k < hex.size() / 2; ++k) {
    const int hi = HexNibble(hex[2 * k]);
    const int lo = HexNibble(hex[2 * k + 1]);
    if (hi < 0 || lo < 0) return false;
    out[k] = static_cast<uint8_t>((hi << 4) | lo);
  }
  return true;
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string s(bytes.size() * 2, '0');
  for (size_t k = 0; k < bytes.size(); ++k) {
    const unsigned char c = static_cast<unsigned char>(bytes[k]);
    s[2 * k] = kHex[c >> 4];
    s[2 * k + 1] = kHex[c & 15];
  }
  return s;
}

/// Parses a decimal integer string (optional sign, digits) into a
/// two's-complement little-endian integer of `width` bytes (4, 8, 16, 32).
/// False when malformed or out of range for the width.
bool ParseDecimalInteger(std::string_view s, int width, uint8_t* out) {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  uint32_t limbs[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    uint64_t carry = static_cast<uint64_t>(c - '0');
    for (auto& l : limbs) {
      const uint64_t v = static_cast<uint64_t>(l) * 10 + carry;
      l = static_cast<uint32_t>(v);
      carry = v >> 32;
    }
    if (carry != 0) return false;  // beyond 256 bits
  }
  // Range: magnitude < 2^(bits-1), or == 2^(bits-1) when negative.
  const int bits = width * 8;
  const int top = bits - 1;  // bit index that must be clear (mostly)
  bool high_set = false;
  for (int b = top; b < 256; ++b) {
    if ((limbs[b / 32] >> (b % 32)) & 1u) {
      high_set = true;
      break;
    }
  }
  if (high_set) {
    // Only -2^(bits-1) is allowed: bit `top` set and nothing else.
    if (!negative) return false;
    for (int b = 0; b < 256; ++b) {
      const bool set = (limbs[b / 32] >> (b % 32)) & 1u;
      if (set != (b == top)) return false;
    }
  }
  if (negative) {
    uint64_t carry = 1;
    for (auto& l : limbs) {
      const uint64_t v = static_cast<uint64_t>(static_cast<uint32_t>(~l)) + carry;
      l = static_cast<uint32_t>(v);
      carry = v >> 32;
    }
  }
  uint8_t bytes[32];
  std::memcpy(bytes, limbs, sizeof(bytes));
  std::memcpy(out, bytes, static_cast<size_t>(width));
  return true;
}

namespace {

template <typename T>
Result<std::shared_ptr<Buffer>> IntegerBuffer(MemoryPool* pool, const Json& arr, int64_t n, const uint8_t* valid_bits,
                                              const std::string& path, const char* key) {
  QUIVER_ASSIGN_OR_RETURN(auto buf, Buffer::AllocateZeroed(pool, n * static_cast<int64_t>(sizeof(T))));
  uint8_t* out = buf->mutable_data();
  for (int64_t k = 0; k < n; ++k) {
    const Json& v = arr[static_cast<size_t>(k)];
    T x{};
    if (!ToInt(v, &x)) {
      if (valid_bits == nullptr || bit_util::GetBit(valid_bits, k)) {
        return Err(path, std::string(key) + "[" + std::to_string(k) + "] = " + Brief(v) + " is not a valid " +
                             (std::is_signed_v<T> ? "int" : "uint") + std::to_string(sizeof(T) * 8));
      }
      x = T{};
    }
    bit_util::StoreLE<T>(out + k * static_cast<int64_t>(sizeof(T)), x);
  }
  return buf;
}

}  // namespace

Result<std::shared_ptr<Buffer>> IntegerData(MemoryPool* pool, TypeId id, const Json& arr, int64_t n,
                                            const uint8_t* valid_bits, const std::string& path, const char* key) {
  return VisitTypeId(id, [&]<TypeId kId>(TypeIdTag<kId>) -> Result<std::shared_ptr<Buffer>> {
    using CType = typename TypeTraits<kId>::CType;
    // Integer-backed: the integers and the temporal types stored as their
    // integer (float16's CType is its uint16 bit pattern, not a value).
    if constexpr (std::is_integral_v<CType> && kId != TypeId::kFloat16) {
      return IntegerBuffer<CType>(pool, arr, n, valid_bits, path, key);
    } else {
      return Err(path, "not an integer type");
    }
  });
}

}  // namespace quiver::integration
