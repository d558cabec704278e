// quiver/formats/parquet/rle_hybrid.h — the RLE / bit-packing hybrid
// (parquet-format Encodings.md "Run Length Encoding / Bit-Packing Hybrid
// (RLE = 3)") used for repetition and definition levels, dictionary
// indices and RLE booleans; the deprecated BIT_PACKED levels (Encodings.md
// "Bit-packed (Deprecated) (BIT_PACKED = 4)", most significant bit first);
// and the little-endian bit unpacking both the hybrid and
// DELTA_BINARY_PACKED use.
//
// Decoders read from caller-owned bytes (which must outlive them) and
// never allocate. Every run is checked against the bytes left: a run
// that needs bytes past the end is Invalid, naming what was short. Not
// thread-safe (one decoder per thread).
#pragma once

#include <cstdint>
#include <span>

#include "quiver/base/result.h"

namespace quiver::parquet {

/// Unpacks `n` values of `bit_width` bits (0..64), least significant bit
/// first, from `in` starting at bit 0, into `out`. The caller guarantees
/// `in` holds at least ceil(n * bit_width / 8) bytes.
void UnpackBitsLsb(const uint8_t* in, int bit_width, int64_t n, uint64_t* out);

/// Reads an unsigned LEB128 varint at `*pos` of `data` (at most 10 bytes).
Result<uint64_t> ReadUleb128(std::span<const uint8_t> data, size_t* pos);

class RleBitPackedDecoder {
 public:
  /// `bit_width` in 0..32 (checked by Make... callers: Invalid beyond).
  RleBitPackedDecoder(std::span<const uint8_t> data, int bit_width) : data_(data), bit_width_(bit_width) {}

  /// Decodes exactly `n` values into `out`. Invalid when the data ends
  /// first or a run is malformed.
  Status Get(int64_t n, uint32_t* out);

  /// When the next `n` values are all `value` inside one RLE run, consumes
  /// them and returns true; otherwise consumes nothing and returns false
  /// (the caller then Gets them). Invalid when a run header is malformed.
  Result<bool> SkipRepeated(int64_t n, uint32_t value);

  /// Bytes consumed so far (whole runs).
  size_t position() const { return pos_; }

 private:
  Status NextRun();

  std::span<const uint8_t> data_;
  int bit_width_;
  size_t pos_ = 0;
  // The current run: RLE (repeat `value` `left` times) or bit-packed
  // (`left` values at bit offset `packed_index` of `packed`).
  bool rle_ = true;
  int64_t left_ = 0;
  uint32_t value_ = 0;
  const uint8_t* packed_ = nullptr;
  int64_t packed_index_ = 0;
};

/// A level decoder for one data page: RLE (the hybrid) or the deprecated
/// BIT_PACKED, with `max_level` giving the bit width. Values above
/// `max_level` are Invalid.
class LevelDecoder {
 public:
  /// `encoding`: Encoding::kRle or kBitPacked (others: NotImplemented).
  /// `num_values` bounds what BIT_PACKED may read.
  static Result<LevelDecoder> Make(int32_t encoding, int max_level, std::span<const uint8_t> data, int64_t num_values);
  Status Get(int64_t n, uint32_t* out);
  /// True (and the `n` levels consumed) when the next `n` levels are all
  /// `level` in one RLE run (the common "no nulls" page: no per-value
  /// work); false and nothing consumed otherwise. Invalid as Get.
  Result<bool> SkipRepeated(int64_t n, uint32_t level);

 private:
  LevelDecoder(std::span<const uint8_t> data, int bit_width) : rle_(data, bit_width) {}
  RleBitPackedDecoder rle_;
  bool bit_packed_ = false;
  std::span<const uint8_t> packed_data_;
  int bit_width_ = 0;
  int max_level_ = 0;
  int64_t index_ = 0;
};

/// Bit width needed for values 0..max_value.
int BitWidthFor(uint64_t max_value);

}  // namespace quiver::parquet
