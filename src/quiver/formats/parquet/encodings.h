// quiver/formats/parquet/encodings.h — decoders of a data page's values
// (parquet-format Encodings.md): PLAIN (0), PLAIN_DICTIONARY (2) and
// RLE_DICTIONARY (8) (indices into the column chunk's dictionary page),
// RLE (3, booleans only), DELTA_BINARY_PACKED (5), DELTA_LENGTH_BYTE_ARRAY
// (6), DELTA_BYTE_ARRAY (7) and BYTE_STREAM_SPLIT (9).
//
// Values come out densely (nulls are the column reader's business):
// fixed-width physical types as little-endian bytes of `width` each
// (BOOLEAN: one byte 0/1; INT32, FLOAT: 4; INT64, DOUBLE: 8; INT96: 12;
// FIXED_LEN_BYTE_ARRAY: its type length), BYTE_ARRAY as string views into
// the page, the dictionary or the decoder's own storage (valid until the
// decoder's next call or its destruction). Every read is checked against
// the bytes left; errors are Invalid saying what was short or malformed.
// Not thread-safe; the page bytes must outlive the decoder.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/memory/buffer.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::parquet {

/// A column chunk's dictionary, PLAIN-decoded from its dictionary page.
/// Its entries are a buffer of the reader's pool: accounted, and (a
/// dictionary of a large chunk holds MiBs) reused from the allocator's kept
/// mappings instead of a fresh mapping faulted in for every column chunk.
struct Dictionary {
  int64_t size = 0;                  ///< number of entries
  bool binary = false;               ///< BYTE_ARRAY entries (views) rather than fixed-width ones
  std::shared_ptr<Buffer> entries;   ///< size * width bytes, or size string_views into `page`
  std::shared_ptr<const void> page;  ///< keeps the decompressed page alive
  /// Fixed-width entries (size * width bytes); null for a binary dictionary.
  const uint8_t* fixed() const { return !binary && entries ? entries->data() : nullptr; }
  /// BYTE_ARRAY entries; null for a fixed-width dictionary.
  const std::string_view* views() const {
    return binary && entries ? reinterpret_cast<const std::string_view*>(entries->data()) : nullptr;
  }
};

class ValueDecoder {
 public:
  virtual ~ValueDecoder() = default;
  /// Decodes the next `n` values into `out` (n * width bytes).
  virtual Status DecodeFixed(int64_t n, uint8_t* out) = 0;
  /// Decodes the next `n` BYTE_ARRAY values into `out[0..n)`.
  virtual Status DecodeBinary(int64_t n, std::string_view* out) = 0;
  /// The next `n` fixed-width values as they lie in the page, consumed,
  /// when the encoding stores them exactly as they decode (PLAIN, not
  /// BOOLEAN), `n` are left and their first byte is aligned to `alignment`
  /// bytes (a power of two); nullptr, nothing consumed, otherwise. The
  /// column reader hands such values out as a slice of the page, no copy.
  virtual const uint8_t* TakeInPlace(int64_t n, size_t alignment) { return nullptr; }
};

/// The decoder of `encoding` for values of `physical_type` (width bytes
/// each, see above; 0 for BYTE_ARRAY) over `data` holding `num_values`
/// values (the non-null count where known, else an upper bound).
/// `dictionary` is required for the dictionary encodings.
/// Errors: NotImplemented for an encoding this type cannot use (naming
/// both); Invalid for a malformed header (DELTA_*).
Result<std::unique_ptr<ValueDecoder>> MakeValueDecoder(int32_t encoding, int32_t physical_type, int width,
                                                       std::span<const uint8_t> data, int64_t num_values,
                                                       const Dictionary* dictionary);

/// PLAIN-decodes a dictionary page of `num_values` entries into a buffer
/// of `pool`. Errors: Invalid when the page cannot hold that many values
/// or a value runs past it; the pool's OutOfMemory.
Result<Dictionary> DecodeDictionaryPage(int32_t physical_type, int width, std::span<const uint8_t> data,
                                        int64_t num_values, std::shared_ptr<const void> page_owner, MemoryPool* pool);

/// The byte width of a physical type's values as decoders produce them
/// (see above), or 0 for BYTE_ARRAY. `type_length`: FLBA width.
int PhysicalWidth(int32_t physical_type, int32_t type_length);

}  // namespace quiver::parquet
