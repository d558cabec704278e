// quiver/compression/codec.h — the two body-compression codecs of the Arrow
// IPC format (Message.fbs CompressionType: LZ4_FRAME = 0, ZSTD = 1).
//
// LZ4_FRAME uses liblz4's frame API (one frame per buffer; the reader also
// accepts block and content checksums and linked blocks). ZSTD uses libzstd
// with a reusable compression / decompression context.
//
// Thread safety: a Codec owns its contexts and is NOT thread-safe; use one
// per thread (writers keep one per writer and thread).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "quiver/base/result.h"

namespace quiver {

enum class CompressionType : int8_t { kNone = -1, kLz4Frame = 0, kZstd = 1 };

/// "none", "lz4" (LZ4_FRAME) or "zstd".
std::string_view CompressionTypeName(CompressionType type);
/// Accepts none, lz4, lz4_frame, zstd (any case). Invalid names the choices.
Result<CompressionType> ParseCompressionType(std::string_view name);

class Codec {
 public:
  virtual ~Codec() = default;

  /// A codec at `level`; kUseDefaultLevel picks the codec's default (ZSTD 3,
  /// LZ4 0). Invalid for kNone and for a level outside [MinLevel, MaxLevel],
  /// naming the valid range.
  static constexpr int kUseDefaultLevel = INT32_MIN;
  static Result<std::unique_ptr<Codec>> Make(CompressionType type, int level = kUseDefaultLevel);

  /// Inclusive level ranges: ZSTD [ZSTD_minCLevel(), ZSTD_maxCLevel()];
  /// LZ4_FRAME [-1 (fast acceleration), LZ4HC_CLEVEL_MAX (12)].
  static int MinLevel(CompressionType type);
  static int MaxLevel(CompressionType type);
  static int DefaultLevel(CompressionType type);

  virtual CompressionType type() const = 0;
  virtual int level() const = 0;

  /// Worst-case compressed size of `input_bytes` (ZSTD_compressBound,
  /// LZ4F_compressFrameBound). Pure.
  virtual int64_t MaxCompressedBytes(int64_t input_bytes) const = 0;

  /// Compresses all of `input` into `output` as one frame; returns the bytes
  /// written. `output` should hold MaxCompressedBytes(input.size()) bytes;
  /// a smaller output may fail with Invalid ("output too small").
  virtual Result<int64_t> Compress(std::span<const uint8_t> input, std::span<uint8_t> output) = 0;

  /// An upper bound of the bytes `input` (one or more frames, as Decompress
  /// takes it) can decompress to, read from the framing alone without
  /// decoding: the frame header's content size where present (LZ4_FRAME and
  /// ZSTD), else per block at most the codec's expansion (LZ4: 255:1 and the
  /// frame's block maximum; ZSTD: ZSTD_decompressBound). Decompress never
  /// succeeds with more output than this, so a declared length above it is
  /// a lie that can be rejected before sizing anything (issue 10 item 3).
  /// Where the framing does not parse, a coarse bound from input.size()
  /// (the decoder then reports the corruption). Never negative; saturates at
  /// INT64_MAX. Reads `input` only; thread-safe.
  virtual int64_t MaxDecompressedBytes(std::span<const uint8_t> input) const = 0;

  /// Decompresses `input` (one or more frames) into exactly `output.size()`
  /// bytes. Invalid when the data is corrupt, when it decodes to fewer bytes
  /// ("decompressed to N bytes, expected M") or to more bytes than
  /// `output.size()`. Never writes past `output`.
  virtual Status Decompress(std::span<const uint8_t> input, std::span<uint8_t> output) = 0;
};

}  // namespace quiver
