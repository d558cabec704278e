// quiver/fetch/chunk_writer.h — cuts a stream of record batches into
// CloudFetch result chunks (fetch-protocol.md, "Arrow payloads").
//
// Each chunk is a complete Arrow IPC stream (schema message, record batch
// messages, end-of-stream marker) of about `target_chunk_bytes` of IPC bytes;
// batches larger than the target are sliced by rows. With `lz4` the served
// bytes are one LZ4 frame (liblz4 LZ4F API) whose header carries the content
// size and a content checksum. Every output buffer is charged to
// `options.pool` and ends at exactly its size (the worst-case compression
// bound is shrunk away before the chunk is handed out).
//
// Pipelining: Next() returns each chunk as soon as its batches have been
// pulled from the input, so a caller can publish chunk k while the producer
// still computes chunk k+1.
//
// Thread safety: one thread at a time (like the input stream).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "quiver/base/result.h"
#include "quiver/columnar/record_batch_stream.h"
#include "quiver/memory/buffer.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::fetch {

struct ChunkWriterOptions {
  /// Pool for the IPC encoding, the LZ4 output and each chunk's bytes. Required.
  MemoryPool* pool = nullptr;
  /// Target uncompressed IPC bytes per chunk (Databricks files are ~20 MiB).
  /// A chunk is closed once it reaches the target; a single row larger than
  /// the target still makes a chunk. Must be >= 1.
  int64_t target_chunk_bytes = int64_t{20} << 20;
  /// Serve each chunk as one LZ4 frame (content size + content checksum).
  bool lz4 = true;
};

/// One finished chunk.
struct Chunk {
  int64_t index = 0;                 ///< 0-based position in the result
  int64_t start_row_offset = 0;      ///< result row of the chunk's first row
  int64_t row_count = 0;             ///< rows in the chunk (>= 0)
  int64_t ipc_bytes = 0;             ///< uncompressed IPC stream size (Thrift bytesNum)
  int64_t schema_message_bytes = 0;  ///< size of the leading schema message in the IPC stream
  bool lz4 = false;                  ///< `bytes` is an LZ4 frame of the IPC stream
  /// The served bytes (LZ4 frame or raw IPC stream), charged to the writer's
  /// pool, size == capacity. Shared: the store and downloads may hold it.
  std::shared_ptr<Buffer> bytes;
};

class ChunkWriter {
 public:
  /// A writer over `input` (not owned; must outlive the writer). Errors:
  /// Invalid for a null pool or target_chunk_bytes < 1.
  static Result<std::unique_ptr<ChunkWriter>> Make(RecordBatchStream* input, ChunkWriterOptions options);
  ~ChunkWriter();

  /// The next chunk, or std::nullopt after the last one. An empty input
  /// still yields one chunk (schema + end-of-stream, 0 rows), so that every
  /// result has at least one well-formed file. Errors: the input's, the IPC
  /// writer's, OutOfMemory from the pool, IOError from LZ4 naming the chunk
  /// index. After an error the writer must not be used again.
  Result<std::optional<Chunk>> Next();

  int64_t rows_written() const { return rows_written_; }
  int64_t chunks_written() const { return chunks_written_; }

 private:
  ChunkWriter(RecordBatchStream* input, ChunkWriterOptions options);

  RecordBatchStream* input_;
  ChunkWriterOptions options_;
  RecordBatchPtr pending_;  // a batch (or the rest of one) not yet written
  bool input_done_ = false;
  int64_t rows_written_ = 0;
  int64_t chunks_written_ = 0;
};

/// LZ4-frame-compresses `bytes` into an exact-size pool buffer (content size
/// and content checksum in the frame; 64 KiB linked blocks, so a streaming
/// reader needs ~260 KiB of LZ4F buffers). Errors: OutOfMemory, IOError
/// naming the LZ4F error text.
Result<std::shared_ptr<Buffer>> Lz4FrameCompress(std::span<const uint8_t> bytes, MemoryPool* pool);

/// Decompresses one LZ4 frame whose header declares its content size, into
/// an exact-size pool buffer. `max_output_bytes` bounds the declared size.
/// Errors: Invalid for a frame without content size, a size above the bound,
/// corrupt data or a checksum mismatch; OutOfMemory.
Result<std::shared_ptr<Buffer>> Lz4FrameDecompress(std::span<const uint8_t> frame, MemoryPool* pool,
                                                   int64_t max_output_bytes);

}  // namespace quiver::fetch
