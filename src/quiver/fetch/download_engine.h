// quiver/fetch/download_engine.h — downloads the CloudFetch files of one
// result in parallel with libcurl multi (HTTP/1.1 keep-alive, HTTP/2 where
// offered), decoding each as its bytes arrive (chunk_decoder.h), with memory
// bounded in bytes.
//
// Two background threads: the engine thread owns the curl multi handle (and
// the ProtocolClient at the start and the end); a link fetcher asks for
// links while it runs, so that a FetchResults the server holds until its
// next chunk exists never stalls the transfers (the client is shared under
// a mutex; a link refresh waits for a page in flight):
//   - links are requested page by page (FetchResults with an explicit
//     startRowOffset) while fewer than `parallel` + 2 links wait to start,
//     and handed to the engine thread, which wakes; empty pages
//     with hasMoreRows are fetched again (bounded); every link is checked
//     (startRowOffsets start at 0 and are contiguous: a gap or an overlap is
//     Invalid naming the chunk; rowCount >= 0; bytesNum <= the limit);
//   - files start strictly in file order, each once the byte window grants
//     its share (its expected decoded size, plus for LZ4 the input block
//     LZ4F buffers, min(size, 4 MiB + 64 KiB)). bytesNum is a hint (servers
//     send the uncompressed size, the compressed size, 0 or a wrong value):
//     the expected size is bytesNum times the largest decoded / bytesNum
//     ratio of the chunks done so far (bytesNum itself before the first),
//     or without bytesNum the largest chunk so far (the whole window for
//     the first); once a chunk is decoded its share becomes its real
//     decoded size, taken past the capacity if need be (later files then
//     wait):
//     a later file never takes budget the next-needed file waits for, and a
//     file larger than the whole window proceeds alone. The share is held
//     until the consumer has read the whole chunk (release_window_share) or
//     dropped its last batch (the returned Buffer owns the share), whichever
//     comes first, so the window counts reservations: expected bytes of
//     files in flight and decoded bytes not yet consumed. Each active download's LZ4F
//     scratch (about two block sizes + 128 KiB, charged to the pool) comes
//     on top, bounded by `parallel`: the engine keeps those contexts from
//     file to file (Lz4ContextCache, so their buffers are not mapped and
//     faulted in again per file) and frees them when the downloads end;
//   - faults: 5xx, 408, 429, timeouts (including the low-speed timeout that
//     cuts a stalled body), resets and truncated bodies are retried with
//     exponential backoff and jitter, at most max_retries times per chunk,
//     resuming with Range when the server sent "Accept-Ranges: bytes" (else
//     restarting the chunk from byte 0); an expired link (before starting,
//     within refresh_margin_ms of expiryTime) or an HTTP 403 is refreshed by
//     FetchResults(startRowOffset = the chunk's) — not charged to the retry
//     budget, at most max_refreshes per chunk; decoding errors (bad LZ4,
//     wrong bytesNum) and other 4xx are final.
//   - Cancel() (any thread) stops every transfer, sends CancelOperation and
//     makes Next() return Cancelled. After the last file the engine sends
//     CloseOperation (unless the server closed the operation already).
//
// Errors name the chunk index and row range: "chunk 3 (rows [300, 400))".
// Thread safety: Next() from one consumer thread; Cancel() and stats() from
// any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "quiver/base/result.h"
#include "quiver/fetch/chunk_decoder.h"
#include "quiver/fetch/protocol_client.h"
#include "quiver/objstore/curl_util.h"

namespace quiver::fetch {

struct DownloadOptions {
  /// Pool charged with every chunk byte (decoders' memory). Required; must
  /// outlive the chunks' Buffers.
  MemoryPool* pool = nullptr;
  ChunkPolicy policy = ChunkPolicy::kStreamMmap;
  /// Byte window (see the file comment). Default 64 MiB, chosen by
  /// measurement (bench/window_sweep.sh, lineitem SF 0.5 over loopback, 20
  /// MiB chunks): with parallel 8 it was as fast as 128 and 256 MiB (within
  /// noise) at 44 MiB peak RSS increase against 85-164 MiB; 16-32 MiB let
  /// one file download at a time and were ~15% slower.
  int64_t window_bytes = int64_t{64} << 20;
  /// Files downloading at once (count bound, besides the byte window).
  int parallel = 8;
  /// Retries per chunk for retryable failures (not counting refreshes).
  int max_retries = 4;
  /// Backoff before retry k (0-based): min(max, initial * 2^k), times a
  /// random factor in [0.5, 1.5).
  int64_t retry_initial_ms = 100;
  int64_t retry_max_ms = 5000;
  /// Link refreshes per chunk (403 or expired) before giving up.
  int max_refreshes = 8;
  /// A link expiring within this many milliseconds is refreshed first.
  int64_t refresh_margin_ms = 1000;
  /// A body slower than low_speed_bytes per second for low_speed_time_s
  /// seconds is cut (and retried).
  int64_t low_speed_bytes = 1;
  int64_t low_speed_time_s = 30;
  /// A transfer that receives no byte for this long is cut (and retried);
  /// sharper than libcurl's low-speed check, which averages over seconds.
  int64_t stall_timeout_ms = 30000;
  int64_t connect_timeout_ms = 10000;
  objstore::TlsOptions tls;
  /// Rows asked per FetchResults page.
  int64_t page_rows = 1000000;
  /// Consecutive empty pages with hasMoreRows accepted before Invalid.
  int max_empty_pages = 1000;
  /// false (the default): bytesNum is only a sizing hint (see the file
  /// comment and chunk_decoder.h); integrity rests on rows, offsets and the
  /// schema. true: decoded size != bytesNum is Invalid naming the chunk
  /// (for servers known to send the exact uncompressed size).
  bool bytes_num_is_exact = false;
  /// Largest decoded chunk accepted, in bytes (a larger bytesNum is clamped
  /// to it as a hint; refused when exact).
  int64_t max_chunk_bytes = int64_t{16} << 30;
  /// Trust at most this many live chunk mappings (0 = decoder default).
  int64_t max_live_mappings = 0;
  /// Check the LZ4 frames' xxHash32 checksums (default). false skips them
  /// for bodies received over TLS (https after any redirect), which already
  /// authenticates every byte in transit: ~17% less client CPU in perf, but
  /// corruption on the server's side (a bad spill file) then shows only
  /// where it breaks the IPC structure. Plain-http bodies are always checked.
  bool verify_lz4_checksums = true;
  /// Rows the consumer will read at most (< 0 = all, the default): once the
  /// links known cover this many rows, no more links are requested and no
  /// later file is downloaded, so `quiver query --limit 3` fetches the first
  /// chunk only. The result then ends after the chunks that cover the limit.
  int64_t row_limit = -1;
};

/// Counters, updated while the engine runs. Thread-safe reads.
struct DownloadStats {
  std::atomic<int64_t> chunks_known{0};
  std::atomic<int64_t> chunks_done{0};
  std::atomic<bool> all_links_known{false};
  std::atomic<int64_t> rows_announced{0};
  std::atomic<int64_t> bytes_downloaded{0};  ///< wire bytes, retries included
  std::atomic<int64_t> bytes_decoded{0};     ///< decompressed bytes of finished chunks
  std::atomic<int64_t> retries{0};
  std::atomic<int64_t> refreshes{0};
  std::atomic<int64_t> range_resumes{0};
  std::atomic<int64_t> restarts{0};
  std::atomic<int64_t> pages{0};
  std::atomic<int64_t> window_peak_bytes{0};
  std::atomic<int64_t> heap_fallbacks{0};
  /// LZ4 chunks decoded without checking their frames' checksums
  /// (DownloadOptions::verify_lz4_checksums false, received over TLS).
  std::atomic<int64_t> lz4_checksums_skipped{0};
};

/// A decoded chunk, handed to the consumer in file order.
struct ReadyChunk {
  int64_t index = 0;
  ResultLink link;
  /// The decompressed Arrow IPC stream. Owns the mapping and the chunk's
  /// window share: both are released when the last reference (the batches
  /// decoded from it) goes.
  std::shared_ptr<Buffer> body;
  /// Returns the chunk's window share now (idempotent; thread-safe). The
  /// consumer calls it once every batch of the chunk was delivered: those
  /// bytes are then the caller's (held in its pool, not in the window).
  std::function<void()> release_window_share;
};

/// "chunk 3 (rows [300, 400))".
std::string ChunkLabel(int64_t index, int64_t start_row, int64_t row_count);

class DownloadEngine {
 public:
  /// Starts the engine thread (and, while links remain, its link fetcher).
  /// `client` is used only by those two threads, one call at a time, until
  /// the engine is destroyed. `first_page` is the direct results page, if
  /// any. Invalid for bad options.
  static Result<std::unique_ptr<DownloadEngine>> Start(std::shared_ptr<ProtocolClient> client,
                                                       OperationHandle operation, bool lz4,
                                                       std::optional<FetchPage> first_page, bool close_operation,
                                                       DownloadOptions options);
  /// Cancels what is still running (no CancelOperation unless Cancel() was
  /// called) and joins the threads (a FetchResults in flight is abandoned
  /// within about a second).
  virtual ~DownloadEngine() = default;

  /// The next chunk in file order (blocking), or nullopt after the last.
  /// Errors: the first chunk error (Invalid, IOError, Timeout, OutOfMemory),
  /// Cancelled; afterwards every call returns the same error.
  virtual Result<std::optional<ReadyChunk>> Next() = 0;

  /// Cancels the fetch (thread-safe, idempotent).
  virtual void Cancel() = 0;

  virtual const DownloadStats& stats() const = 0;
  /// Bytes of the window granted now.
  virtual int64_t window_in_use_bytes() const = 0;
};

}  // namespace quiver::fetch
