// quiver/compression/body_compressor.h — the one codec factory of every
// write path (IPC stream writer, file writer, and later the result chunk
// writer): compresses one buffer into an Arrow IPC body region
// (Message.fbs BodyCompression, method BUFFER: an 8-byte little-endian
// uncompressed length, then one LZ4 frame or ZSTD frame; -1 = stored raw),
// and decides which memory the compressed output ends up in.
//
// Background (Spark BoundedZstdCompressionCodec change, Arrow Java 19): a
// codec that leaves each output in its `8 + compressBound(len)` buffer —
// rounded up to a power of two below 16 MiB by Arrow Java's allocator —
// makes a batch hold about its uncompressed size in extra memory until it is
// serialized, whatever the compression ratio. The output policies below are
// the three answers: keep (the old behaviour), shrink-if-halves (the Spark
// change) and exact (quiver's).
//
// Every policy produces byte-identical regions; only memory differs.
// Thread safety: a BufferCompressor owns a codec context and a scratch
// buffer and is NOT thread-safe; use one per writer and thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "quiver/compression/body_region.h"
#include "quiver/compression/codec.h"
#include "quiver/memory/buffer.h"

namespace quiver {

/// Where a compressed output ends up.
enum class OutputPolicy : uint8_t {
  /// The output stays in the `8 + MaxCompressedBytes(len)` buffer it was
  /// compressed into (Arrow Java 19; the baseline).
  kKeep,
  /// As kKeep, then the output (with its prefix) is copied to a new buffer
  /// when that buffer's granted size is at most half of the old buffer's
  /// capacity (the Spark change). If the new buffer cannot be allocated the
  /// output stays where it is and the call still succeeds.
  kShrinkIfHalves,
  /// Every output ends in a buffer of exactly its own size: the codec writes
  /// into a per-compressor scratch buffer (allocated once, grown to the
  /// largest bound seen, reused for every buffer). An output smaller than
  /// half the scratch is copied into an exact-size allocation (cheap: the
  /// scratch stays hot for the next buffer); a larger one takes the scratch
  /// itself, shrunk to its size (in place where the allocator can), and a
  /// new scratch is made on the next call. If the exact allocation fails,
  /// the scratch becomes the output's buffer (the call still succeeds).
  kExact,
};

/// The default policy: kExact. Measured with `quiver bench compress`
/// (README, issue notes): it holds 1.00-1.01x the compressed bytes for every
/// batch kind (keep: up to 8x, shrink-if-halves: up to 1.9x), its peak is
/// the compressed bytes plus one scratch buffer of the largest single
/// compression bound, and it costs no more CPU than keep, because the scratch
/// is faulted in once and reused while keep touches a fresh bound-sized
/// buffer for every output.
inline constexpr OutputPolicy kDefaultOutputPolicy = OutputPolicy::kExact;

/// "keep", "shrink-if-halves", "exact".
std::string_view OutputPolicyName(OutputPolicy policy);
/// Parses a policy name; Invalid lists the accepted names.
Result<OutputPolicy> ParseOutputPolicy(std::string_view name);

struct BodyCompressionOptions {
  /// kNone makes Make() fail: callers that do not compress need no compressor.
  CompressionType codec = CompressionType::kNone;
  /// Codec::kUseDefaultLevel = the codec's default (ZSTD 3, LZ4 0).
  int level = Codec::kUseDefaultLevel;
  /// Store a buffer raw (-1 prefix) unless compression saves at least this
  /// fraction of its bytes; 0 = any saving. Range [0, 1).
  double min_space_saving = 0.0;
  OutputPolicy output_policy = kDefaultOutputPolicy;
};

/// One body region produced by BufferCompressor::Compress.
struct CompressedRegion {
  /// Compressed: `bytes` holds the 8-byte prefix and the frame, and
  /// `prefix_in_bytes` is true. Raw (`raw`): `bytes` is the (shared) input
  /// buffer and the region is the -1 prefix followed by `bytes`. Neither:
  /// `bytes` is the region as is (an empty input, or a buffer of a batch
  /// written without compression).
  std::shared_ptr<Buffer> bytes;
  bool prefix_in_bytes = false;
  bool raw = false;
  /// A region stored raw: the -1 prefix (body_region.h kRawRegionPrefix),
  /// then `input`, shared. Used when compression does not pay and for
  /// columns written uncompressed inside a compressed batch.
  static CompressedRegion StoredRaw(std::shared_ptr<Buffer> input) {
    CompressedRegion region;
    region.bytes = std::move(input);
    region.raw = true;
    return region;
  }
  /// Bytes the region takes in the IPC body (prefix included).
  int64_t region_bytes() const {
    if (bytes == nullptr) return 0;
    return raw ? kRegionPrefixBytes + bytes->size() : bytes->size();
  }
  /// Memory this region holds of its own (the capacity of a compressed
  /// output buffer; 0 for raw and empty regions, which share the input).
  int64_t held_bytes() const { return prefix_in_bytes ? bytes->capacity_bytes() : 0; }
};

class BufferCompressor {
 public:
  /// Validates the options when they are made: Invalid for kNone, for a
  /// level outside the codec's range (naming the range) and for
  /// min_space_saving outside [0, 1). Outputs are allocated from
  /// `output_pool`, the scratch buffer (kExact) from `scratch_pool`
  /// (nullptr = output_pool). Both pools must outlive the compressor.
  static Result<std::unique_ptr<BufferCompressor>> Make(const BodyCompressionOptions& options, MemoryPool* output_pool,
                                                        MemoryPool* scratch_pool = nullptr);
  ~BufferCompressor();

  /// Compresses `input` into a region. Ownership: the region shares `input`
  /// when stored raw; a compressed output is owned by the region.
  /// Errors: OutOfMemory when the working buffer (bound-sized for keep and
  /// shrink-if-halves, the scratch for exact) cannot be allocated — nothing
  /// stays allocated then; codec errors (Invalid). Never fails because a
  /// right-sizing allocation failed.
  Result<CompressedRegion> Compress(const std::shared_ptr<Buffer>& input);

  CompressionType codec() const;
  /// The level really used (the default resolved).
  int level() const;
  const BodyCompressionOptions& options() const { return options_; }
  /// Capacity of the scratch buffer held right now (kExact), in bytes.
  int64_t scratch_bytes() const { return scratch_ ? scratch_->capacity_bytes() : 0; }
  /// Returns the scratch buffer to its pool (it is re-made on demand).
  void ReleaseScratch() { scratch_.reset(); }

 private:
  BufferCompressor(BodyCompressionOptions options, std::unique_ptr<Codec> codec, MemoryPool* output_pool,
                   MemoryPool* scratch_pool);
  bool SavesEnough(int64_t input_bytes, int64_t output_bytes) const;

  BodyCompressionOptions options_;
  std::unique_ptr<Codec> codec_;
  MemoryPool* output_pool_;
  MemoryPool* scratch_pool_;
  std::shared_ptr<Buffer> scratch_;
};

}  // namespace quiver
