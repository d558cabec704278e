// quiver/formats/parquet/rle_encoder.h — the encoder of the RLE /
// bit-packing hybrid (parquet-format Encodings.md "Run Length Encoding /
// Bit-Packing Hybrid (RLE = 3)"), the writing side of rle_hybrid.h: used
// for definition levels and dictionary indices; and LSB-first bit packing
// (PLAIN booleans).
//
// Runs of 8 or more equal values become RLE runs; everything else goes into
// bit-packed runs of groups of 8 values. A bit-packed run is only padded
// (with zeros) at the very end of the data, where readers stop after the
// count they were told. Output is appended to a caller std::string-like
// byte vector. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace quiver::parquet {

/// Appends the hybrid encoding of `values` (each < 2^bit_width, bit_width
/// in 0..32) to `out` (no length prefix: the caller adds one where the
/// format asks for it).
void AppendRleHybrid(std::span<const uint32_t> values, int bit_width, std::string* out);

/// Appends `values` (0 or 1 each) bit-packed, least significant bit first,
/// ceil(n / 8) bytes (PLAIN booleans).
void AppendPackedBits(std::span<const uint8_t> values, std::string* out);

/// Appends `v` as an unsigned LEB128 varint.
void AppendUleb128(uint64_t v, std::string* out);

}  // namespace quiver::parquet
