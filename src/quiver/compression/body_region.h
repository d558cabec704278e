// quiver/compression/body_region.h — the rule of ONE region of a compressed
// Arrow IPC body (Message.fbs BodyCompression, method BUFFER), both ways.
//
// A region of a body with BodyCompression is an 8-byte little-endian
// signed prefix followed by its bytes:
//   prefix >= 0   the uncompressed length; the bytes are one or more frames
//                 of the batch's codec (LZ4_FRAME or ZSTD);
//   prefix == -1  the bytes are stored raw (compression did not pay);
//   other < 0     invalid.
// A zero-length region has no prefix (an empty buffer). Bodies without
// BodyCompression have no prefixes at all; these helpers are not for them.
//
// Writers encode with EncodeRegionPrefix (BufferCompressor writes the
// length before its frame; raw regions get kRawRegionPrefix); readers decode
// with DecodeRegion, which checks the prefix against the limits, the
// codec's own bound and the pool's room before it allocates, then
// decompresses. Learned from Arrow C++ ipc/reader.cc (DecompressBuffer) and
// Arrow Java's AbstractCompressionCodec; the limits are quiver's.
//
// Thread safety: pure functions, except that DecodeRegion uses `codec`
// (not thread-safe: one codec per thread) and charges `pool` (thread-safe).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "quiver/compression/codec.h"
#include "quiver/memory/buffer.h"

namespace quiver {

/// Bytes of the length prefix in front of every non-empty region.
inline constexpr int64_t kRegionPrefixBytes = 8;
/// The prefix of a region stored raw.
inline constexpr int64_t kRawRegionPrefix = -1;

/// Writes the 8-byte little-endian prefix to out[0, 8): `uncompressed_bytes`
/// (>= 0) before a compressed frame, or kRawRegionPrefix before raw bytes.
void EncodeRegionPrefix(int64_t uncompressed_bytes, uint8_t* out);

/// Limits on what one region may declare (ipc ReadOptions carries them).
struct RegionLimits {
  /// The largest uncompressed length a prefix may declare, in bytes.
  int64_t max_decompressed_bytes = int64_t{4} << 30;
  /// The largest uncompressed / compressed ratio (a zip-bomb guard); the
  /// compressed size counts as at least 1 byte.
  int64_t max_compression_ratio = 100000;
};

/// One decoded region.
struct DecodedRegion {
  /// The region's content: a slice of the body (stored raw) or a fresh
  /// buffer of exactly the uncompressed length from `pool` (decompressed).
  std::shared_ptr<Buffer> bytes;
  /// True for a fresh pool buffer the caller owns alone and may modify in
  /// place; false for a slice sharing the body.
  bool decompressed = false;
};

/// Decodes the region body[offset, offset + length) of a compressed body.
/// Preconditions: the range lies inside `body` and length > 0 (the caller
/// checked the bounds; empty regions need no decoding).
/// Every error text starts with `where` (the caller's location, e.g.
/// "message 3: field 'x' buffer 1 (data)") and ": ", codec errors with
/// `where` and " (zstd): ". Rules, in order:
///   length < 8                      Invalid "compressed region of N bytes is
///                                   shorter than its 8-byte length prefix"
///   prefix == -1                    the bytes after the prefix, shared
///   prefix < -1                     Invalid "negative uncompressed length P"
///   prefix > limits.max_decompressed_bytes   Invalid "... exceeds the limit"
///   prefix > ratio * compressed     Invalid "... is over R times the compressed N bytes"
///   prefix > codec.MaxDecompressedBytes(frames)  Invalid "... is more than ... can produce"
///   prefix > pool->AvailableBytes() (a limit applies)  OutOfMemory
///                                   (MemoryPool::OutOfMemoryError)
///   otherwise                       a pool buffer of `prefix` bytes holding
///                                   the decompressed frames (codec errors
///                                   are returned with the codec's name)
/// Nothing stays allocated on error.
Result<DecodedRegion> DecodeRegion(const std::shared_ptr<Buffer>& body, int64_t offset, int64_t length, Codec& codec,
                                   const RegionLimits& limits, MemoryPool* pool, std::string_view where);

}  // namespace quiver
