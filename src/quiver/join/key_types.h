// quiver/join/key_types.h — which build/probe key column types can be
// joined, and how their values are compared: as 64-bit integers (the
// LongHashedRelation path) or as encoded bytes (the generic path).
//
// Comparable pairs (anything else is Invalid, naming both columns):
//   - integers: int8..int64 and uint8..uint32 with each other (by value,
//     widened to int64); uint64 with uint8..uint64 (by value). uint64 with
//     a signed type is refused: values above INT64_MAX have no signed equal.
//   - temporal types with the same type id and unit (date32, date64,
//     time32, time64, timestamp, duration; time zones may differ: the
//     instants are compared), as 64-bit integers.
//   - bool with bool; float32 with float32 and float64 with float64 (-0.0
//     equals 0.0, NaN equals NaN, as Spark normalizes join keys); float16,
//     decimals, fixed_size_binary and intervals with an equal type (bytes).
//   - binary, utf8, large_binary, large_utf8 with each other (bytes).
// Nulls never match (SQL semantics); see the join types for how null keys
// are kept or dropped.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"

namespace quiver::join {

/// How one key column pair is compared.
enum class KeyClass : uint8_t {
  kInt64,    ///< widened to int64 (integers, uint64 pairs by bit pattern, temporal)
  kBool,     ///< one byte
  kFloat32,  ///< 4 bytes, normalized
  kFloat64,  ///< 8 bytes, normalized
  kBytes,    ///< fixed-width raw bytes (`width`)
  kVarBytes  ///< length-prefixed bytes
};

struct KeyColumnSpec {
  KeyClass key_class = KeyClass::kInt64;
  int32_t width = 8;  ///< encoded fixed bytes (kVarBytes: 4-byte length prefix)
};

/// Checks that a build key column of type `build` and a probe key column of
/// type `probe` can be compared, and how. `build_name` / `probe_name` name
/// them in the Invalid error, e.g. "key columns 'a' (utf8) and 'b' (int64)
/// cannot be compared".
Result<KeyColumnSpec> ResolveKeyPair(const DataType& build, const std::string& build_name, const DataType& probe,
                                     const std::string& probe_name);

/// True when values of this type load as int64 (LoadKeysAsInt64).
bool LoadsAsInt64(const DataType& type);

/// Loads rows [begin, begin + n) of an int64-loadable array as int64 (the
/// array's offset applied). Values under nulls are unspecified.
void LoadKeysAsInt64(const ArrayData& array, int64_t begin, int64_t n, int64_t* out);

/// Validity of rows [begin, begin + n) of several key columns combined:
/// valid[j] = 1 when every column is valid at row begin + j, else 0.
/// Returns true when some row has a null key.
bool CombineKeyValidity(const std::vector<const ArrayData*>& columns, int64_t begin, int64_t n, uint8_t* valid);

/// Encodes multi-column keys into bytes for the generic relation. Built
/// from the resolved specs; the same encoder is used on the build and the
/// probe side so equal keys give equal bytes.
class KeyEncoder {
 public:
  explicit KeyEncoder(std::vector<KeyColumnSpec> specs);

  const std::vector<KeyColumnSpec>& specs() const { return specs_; }
  /// True when every column has a fixed encoded width.
  bool fixed_width() const { return fixed_width_; }
  /// Encoded bytes of a key without variable-width parts.
  int32_t fixed_bytes() const { return fixed_bytes_; }

  /// Encoded size of row `i` (array offsets applied inside), assuming its
  /// key is valid.
  int64_t EncodedSize(const std::vector<const ArrayData*>& columns, int64_t i) const;
  /// Writes the encoding of row `i` to `out` (EncodedSize(i) bytes).
  void Encode(const std::vector<const ArrayData*>& columns, int64_t i, uint8_t* out) const;

 private:
  std::vector<KeyColumnSpec> specs_;
  bool fixed_width_ = true;
  int32_t fixed_bytes_ = 0;
};

}  // namespace quiver::join
