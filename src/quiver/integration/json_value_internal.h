// quiver/integration/json_value_internal.h — scalar conversions shared by the
// integration JSON schema, reader and writer files (not installed API; only
// src/quiver/integration/*.cc include it).
//
// The integration format (Arrow docs "Integration Testing") writes 64-bit
// integers as JSON strings, binary values as hex and decimals as unscaled
// decimal integer strings; these helpers convert one JSON value each.
// Every function is pure and reentrant; none throws (nlohmann accessors are
// called only after the matching is_*() check).
#pragma once

#include <charconv>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>

#include "quiver/base/result.h"
#include "quiver/columnar/data_type.h"
#include "quiver/memory/buffer.h"

namespace quiver::integration {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

/// Largest "count" (and byteWidth / listSize) accepted from input: Arrow
/// lengths are int32 in the integration format.
inline constexpr int64_t kMaxCount = std::numeric_limits<int32_t>::max();

/// The member `key` of `obj`, or nullptr when `obj` is not an object or has
/// no such member. The pointer lives as long as `obj`.
const Json* Member(const Json& obj, const char* key);

/// Invalid("<path>: <msg>"): every reader error names its location.
Status Err(const std::string& path, const std::string& msg);

/// A short rendering of a JSON value for messages (at most 60 characters;
/// containers by kind only, since dumping a deeply nested value would
/// recurse without bound).
std::string Brief(const Json& v);

/// Parses a whole decimal integer string (an optional leading '+'); false on
/// empty input, trailing characters or overflow of T.
template <typename T>
bool IntegerFromString(const std::string& s, T* out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = b + s.size();
  if (*b == '+') ++b;
  auto res = std::from_chars(b, e, *out);
  return res.ec == std::errc() && res.ptr == e;
}

/// A JSON number or decimal string as int64 / uint64; false when `v` is
/// neither or does not fit.
bool ToInt64(const Json& v, int64_t* out);
bool ToUInt64(const Json& v, uint64_t* out);

/// A JSON number or decimal string as the integer type T; false when it does
/// not fit T's range.
template <typename T>
bool ToInt(const Json& v, T* out) {
  if constexpr (std::is_signed_v<T>) {
    int64_t x;
    if (!ToInt64(v, &x)) return false;
    if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max()) return false;
    *out = static_cast<T>(x);
  } else {
    uint64_t x;
    if (!ToUInt64(v, &x)) return false;
    if (x > std::numeric_limits<T>::max()) return false;
    *out = static_cast<T>(x);
  }
  return true;
}

/// A JSON number, or one of the strings Arrow implementations write for
/// non-finite values ("NaN", "Infinity", "-Infinity", "inf", ...).
bool ToDouble(const Json& v, double* out);

/// Decodes an even-length hex string into out[0, hex.size()/2); false on an
/// odd length or a character outside [0-9A-Fa-f]. `out` must hold
/// hex.size()/2 bytes.
bool HexDecode(std::string_view hex, uint8_t* out);

/// Upper-case hex of `bytes` (2 characters per byte).
std::string HexEncode(std::string_view bytes);

/// Parses a decimal integer string (optional sign, digits) into a
/// two's-complement little-endian integer of `width_bytes` bytes (4, 8, 16
/// or 32) at `out`. False when malformed or out of range for the width.
bool ParseDecimalInteger(std::string_view s, int width_bytes, uint8_t* out);

/// A new buffer from `pool` holding `n` little-endian integers parsed from
/// the JSON array `arr` (which has at least `n` entries), for any
/// integer-backed type id (int8..uint64, date, time, timestamp, duration,
/// interval year-month). Entries of null slots (`valid_bits` given and the
/// bit clear) that do not parse read 0. Invalid naming `path` and
/// "<key>[k]" for an entry out of the type's range or not an integer, or for
/// another type id; OutOfMemory from the pool.
Result<std::shared_ptr<Buffer>> IntegerData(MemoryPool* pool, TypeId id, const Json& arr, int64_t n,
                                            const uint8_t* valid_bits, const std::string& path, const char* key);

}  // namespace quiver::integration
