// quiver/fetch/chunk_decoder.h — turns the bytes of one CloudFetch file (an
// Arrow IPC stream, optionally LZ4-framed) into one right-sized Buffer that
// the IPC reader decodes zero-copy.
//
// The decoder is fed byte spans as they arrive (it does no I/O: the download
// engine, a file, or a fuzzer feed it) and is finished once the body is
// complete. Three policies are offered for comparison (the seed,
// databricks-sql-python #1032, measured the first two):
//   heap        — hold the compressed body in a growing heap buffer, then
//                 decompress it whole into another heap buffer (the seed's
//                 "before").
//   mmap-after  — hold the compressed body, then decompress it into a
//                 private anonymous mapping (the seed's "after").
//   stream-mmap — decompress each span as it arrives (LZ4F streaming API)
//                 into a private anonymous mapping sized from the frame's
//                 content size or the bytesNum hint; the compressed body is never
//                 held whole (quiver's default). Peak per chunk ≈ its
//                 decompressed size.
// Uncompressed bodies are copied as they arrive into a mapping (mmap
// policies) or a heap buffer (heap).
//
// Mappings: sized from the hint (from 2 MiB up, starting on a 2 MiB boundary
// with MADV_HUGEPAGE, so huge pages cover them and first-touch faults are
// few), grown with mremap when the hint is missing
// or too small, the unused tail given back with mremap at the end; when a
// mapping cannot be made (mmap fails, or the process's live chunk mappings
// reach options.max_live_mappings, derived from vm.max_map_count) the pool's
// allocator is used instead. Every byte of a mapping is charged to the pool
// (MemoryPool::Reserve) before it is mapped, and uncharged when unmapped.
// LZ4F's internal buffers (one block in, one block out, ~2 x the frame's
// block size) are charged to the pool too, mapped when >= 256 KiB, and
// freed with the decoder (or kept for the next chunk by an Lz4ContextCache).
//
// bytesNum is a hint by default (bytes_num_is_exact = false): servers fill
// it with the uncompressed size (the Thrift protocol), the compressed size
// (the REST API and drivers reading it that way), 0, or a wrong value. The
// mapping is sized from the LZ4 frame's content size when the frame has one
// (within the limits below), else from the hint (else 1 MiB, or 4 x the
// compressed length), grown with mremap as output comes, the tail given back
// at the end; a hint the pool refuses is replaced by a 1 MiB start. With a
// hint the output is bounded by max(hint, compressed_length) x
// max_expansion_ratio (+ 4 MiB), so an endless body is cut (a hint below
// 1/256 of the decoded size of a body without Content-Length is refused). Integrity rests on what the IPC
// reader checks afterwards (rows, offsets, schema), not on bytesNum.
//
// Integrity (each failure is Invalid naming options.chunk_label):
//   - with bytes_num_is_exact, decompressed bytes == expected_bytes and an
//     LZ4 frame's content size, when present, must fit expected_bytes;
//   - content sizes (and, when exact, expected_bytes) larger than the
//     compressed bytes can produce (options.max_expansion_ratio, LZ4 ≈
//     255:1) are refused before anything is mapped, when the compressed
//     length is known;
//   - the LZ4 content and block checksums verify (LZ4F does it);
//   - the body ends on a frame boundary (no truncated frame);
//   - bytes received == compressed_length when that is known.
//
// Thread safety: one decoder per thread. The Buffer it returns is immutable
// and may be shared across threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/memory/buffer.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::fetch {

/// Where a chunk's decompressed bytes are built (see the file comment).
enum class ChunkPolicy { kHeap, kMmapAfter, kStreamMmap };

/// LZ4 decompression contexts, with LZ4F's block buffers (about two block
/// sizes + 128 KiB: ~8 MiB for 4 MiB blocks), kept between the chunks of
/// one download so that each file does not map, fault in and unmap that
/// scratch anew (page faults are costly: design notes, "Machine notes").
/// A kept context stays charged to the pool it was made with until Clear()
/// or the cache's destruction. A decoder given a cache takes a context made
/// with its own pool when one is kept, and gives its context back after a
/// successful Finish(); a failed or reset decoder frees its context.
/// Thread safety: every method may be called from any thread.
class Lz4ContextCache {
 public:
  /// An LZ4F context and the accounting of its scratch (opaque).
  struct Context;
  struct ContextDeleter {
    void operator()(Context* context) const;
  };
  using ContextPtr = std::unique_ptr<Context, ContextDeleter>;

  /// Keeps at most `max_contexts` (< 1: none).
  explicit Lz4ContextCache(int max_contexts);
  Lz4ContextCache(const Lz4ContextCache&) = delete;
  Lz4ContextCache& operator=(const Lz4ContextCache&) = delete;
  ~Lz4ContextCache();

  /// A kept context made with `pool`, ready for a new frame; null when none.
  ContextPtr Take(MemoryPool* pool);
  /// Keeps `context` (ended at a frame boundary) while fewer than
  /// max_contexts are kept; frees it otherwise.
  void Give(ContextPtr context);
  /// Frees every kept context (their scratch goes back to the pool and the OS).
  void Clear();
  /// Contexts kept now.
  int kept() const;

 private:
  mutable std::mutex mu_;
  std::vector<ContextPtr> kept_;
  int max_contexts_;
};

/// "heap", "mmap-after", "stream-mmap".
std::string_view ChunkPolicyName(ChunkPolicy policy);
/// Parses a ChunkPolicyName. Invalid lists the choices.
Result<ChunkPolicy> ParseChunkPolicy(std::string_view name);

struct ChunkDecoderOptions {
  /// Pool charged with every byte the decoder holds (compressed bytes held,
  /// mapping capacity, heap buffers). Required; must outlive the returned
  /// Buffer (the Buffer keeps it alive through shared_from_this).
  MemoryPool* pool = nullptr;
  ChunkPolicy policy = ChunkPolicy::kStreamMmap;
  /// The body is LZ4-framed (one frame or several concatenated frames).
  bool lz4 = true;
  /// The size the server announced (bytesNum), in bytes; <= 0 = unknown.
  /// A sizing hint unless bytes_num_is_exact (larger than
  /// max_decompressed_bytes: clamped to it).
  int64_t expected_bytes = -1;
  /// When true, decompressed bytes != expected_bytes is an error (a strict
  /// check for servers known to send the exact uncompressed size). When
  /// false (the default), expected_bytes is only a sizing hint (grown or
  /// trimmed), see the file comment.
  bool bytes_num_is_exact = false;
  /// The body's length (Content-Length) in bytes; < 0 = unknown. When known,
  /// the received total must equal it.
  int64_t compressed_length = -1;
  /// Largest decompressed size accepted when nothing bounds it, in bytes.
  int64_t max_decompressed_bytes = int64_t{16} << 30;
  /// Largest decompressed / compressed ratio believed (LZ4's maximum is
  /// about 255:1; a 64 KiB allowance covers frame headers).
  int64_t max_expansion_ratio = 256;
  /// Live chunk mappings allowed in the process before falling back to the
  /// heap; <= 0 = a quarter of vm.max_map_count (65530 → 16382).
  int64_t max_live_mappings = 0;
  /// Names the chunk in error messages, e.g. "chunk 3 (rows 300..399)".
  std::string chunk_label = "chunk";
  /// Check the LZ4 frames' content and block checksums (xxHash32) when they
  /// carry them (default). false skips computing them (xxHash32 was ~17% of
  /// a CloudFetch client's CPU in perf); the download engine allows it only
  /// for bodies received over TLS and only when DownloadOptions asks.
  /// Either way the decoded IPC is validated (rows, offsets, schema) and
  /// LZ4 decoding stays bounds-checked.
  bool verify_lz4_checksums = true;
  /// LZ4 contexts to take from and give back to (shared by the decoders of
  /// one download); null = a fresh context per decoder, freed with it.
  std::shared_ptr<Lz4ContextCache> lz4_contexts;
};

/// Process-wide counters of chunk mappings (all decoders). Thread-safe.
struct MappingStats {
  int64_t live_mappings = 0;
  int64_t mapped_bytes = 0;       ///< bytes mapped now
  int64_t peak_mapped_bytes = 0;  ///< highest mapped_bytes since reset
  int64_t heap_fallbacks = 0;     ///< mappings refused and replaced by the heap
  int64_t mremap_grows = 0;       ///< growths of a mapping
  int64_t tail_trims = 0;         ///< mappings whose unused tail was given back
};
MappingStats GetMappingStats();
/// Sets peak_mapped_bytes to mapped_bytes.
void ResetMappingPeak();
/// vm.max_map_count (65530 when it cannot be read).
int64_t SystemMaxMapCount();

class ChunkDecoder {
 public:
  /// Checks the options (Invalid: no pool; with bytes_num_is_exact,
  /// expected_bytes larger than compressed_length can produce or than
  /// max_decompressed_bytes). Nothing is allocated until bytes arrive.
  static Result<std::unique_ptr<ChunkDecoder>> Make(ChunkDecoderOptions options);
  virtual ~ChunkDecoder() = default;

  /// Feeds the next bytes of the body. Errors (Invalid for bad data, with
  /// the chunk label; OutOfMemory from the pool) are final: the decoder
  /// then holds nothing.
  virtual Status Consume(std::span<const uint8_t> bytes) = 0;

  /// Drops what was received (a retry restarting the chunk): back to the
  /// state after Make, nothing held.
  virtual void Reset() = 0;

  /// Ends the body and returns the decompressed bytes: a Buffer of exactly
  /// the decompressed size (a mapping or a heap allocation, 64-byte aligned
  /// or better) owning its memory, charged to the pool until released.
  /// Errors: Invalid (truncated frame, length or size mismatch, bad
  /// checksum); afterwards the decoder holds nothing.
  virtual Result<std::shared_ptr<Buffer>> Finish() = 0;

  /// Bytes received so far (compressed, as on the wire).
  virtual int64_t received_bytes() const = 0;
  /// Bytes the decoder charges to the pool now.
  virtual int64_t held_bytes() const = 0;
  /// Whether the output went to the heap because a mapping was refused.
  virtual bool used_heap_fallback() const = 0;
};

/// Convenience: one decoder fed `body` whole.
Result<std::shared_ptr<Buffer>> DecodeChunk(std::span<const uint8_t> body, ChunkDecoderOptions options);

}  // namespace quiver::fetch
