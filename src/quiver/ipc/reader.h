// quiver/ipc/reader.h — Arrow IPC stream and file reading.
//
// Follows the Arrow specification "Serialization and Interprocess
// Communication": encapsulated messages (0xFFFFFFFF continuation, int32
// metadata length, Message flatbuffer, 8-byte aligned body), legacy pre-0.15
// framing (int32 length only), the end-of-stream marker, dictionary batches
// (initial, delta, replacement), body compression (BodyCompression BUFFER:
// int64 uncompressed length prefix, -1 = raw), metadata V4 and V5, big-endian
// bodies (swapped to native order), and the file format (ARROW1 magic,
// footer with Blocks).
//
// Untrusted input: every length, offset and count is checked against the
// bytes available, the schema and the options' limits before it sizes an
// allocation, a slice or an index; decoded batches are validated at
// options.validation. Errors name the message index, field path and buffer
// index with declared and actual values. Bytes after the end-of-stream
// marker are never read. A batch body is loaded in passes (Arrow C++'s
// order): every buffer located and bounds-checked against the schema, then
// the regions decompressed, then buffers realigned / byte-swapped; so a
// structurally broken batch is refused before anything is decompressed.
//
// Body statistics (per-buffer sizes, message custom metadata) are kept only
// with options.collect_body_stats (last_batch_stats()).
//
// Memory: buffers that can be used in place (uncompressed, native order,
// 8-byte aligned) are zero-copy slices of the input, which the batches keep
// alive; everything else is allocated from options.pool.
//
// Thread safety: a reader is used from one thread at a time; the batches it
// returns are immutable and may be shared across threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "quiver/columnar/array_data.h"
#include "quiver/columnar/record_batch_stream.h"
#include "quiver/ipc/io.h"
#include "quiver/ipc/options.h"

namespace quiver::ipc {

enum class IpcFormat { kStream, kFile };
std::string_view IpcFormatName(IpcFormat format);  // "stream" / "file"

/// Sizes of one top-level column in one message body (collected only with
/// ReadOptions::collect_body_stats).
struct ColumnBodyStats {
  std::string name;  ///< the schema field's name (a copy)
  /// Bytes of each IPC buffer of the column (depth-first, children
  /// included) as stored in the body (compressed size, prefix included).
  std::vector<int64_t> stored_buffer_bytes;
  int64_t stored_bytes = 0;        ///< sum of stored_buffer_bytes
  int64_t uncompressed_bytes = 0;  ///< bytes after decompression
};

/// What one record batch message held (collected only with
/// ReadOptions::collect_body_stats; a default-constructed value otherwise).
/// A plain value: copies own their strings; no reference into the input.
struct BatchBodyStats {
  /// Stream: the message's index in the stream (0 = the schema);
  /// file: the record batch block's index in the footer.
  int64_t message_index = 0;
  int64_t num_rows = 0;
  /// The BodyCompression codec; kNone for an uncompressed body.
  CompressionType codec = CompressionType::kNone;
  /// The message's custom metadata (Message.custom_metadata), as stored:
  /// order and repeated keys kept, a missing key or value as "". Not
  /// interpreted by the reader; e.g. quiver's writer records its codec level
  /// under kCompressionLevelMetadataKey (options.h), which `quiver stats`
  /// shows.
  KeyValueMetadata message_metadata;
  int64_t metadata_bytes = 0;  ///< the Message flatbuffer's size in bytes
  int64_t body_bytes = 0;      ///< the message body's size in bytes
  /// One entry per top-level schema field, in schema order.
  std::vector<ColumnBodyStats> columns;
};

class RecordBatchReader : public RecordBatchStream {
 public:
  virtual ~RecordBatchReader() = default;

  /// Opens IPC bytes held in memory (a mapped file or a loaded stream);
  /// the format is detected from the content (ARROW1 magic = file). The
  /// reader and the batches keep `bytes` alive. Errors: Invalid for
  /// malformed framing or schema, NotImplemented for unsupported versions.
  static Result<std::unique_ptr<RecordBatchReader>> Open(std::shared_ptr<Buffer> bytes, ReadOptions options);

  /// Opens a sequential stream-format source (e.g. a pipe); reads message by
  /// message, so memory stays at one message at a time.
  static Result<std::unique_ptr<RecordBatchReader>> OpenStream(std::unique_ptr<InputStream> input, ReadOptions options);

  /// Opens a path: file or stream detected from content; "-" is stdin.
  /// Errors of the open and of every later Next() start with "'PATH': ".
  static Result<std::unique_ptr<RecordBatchReader>> OpenPath(const std::string& path, ReadOptions options);

  /// Opens the bytes of the regular file `path`, already mapped or read
  /// (e.g. by a MappedFileCache): as Open, with the errors of the open and
  /// of every later Next() starting with "'PATH': " as OpenPath's.
  static Result<std::unique_ptr<RecordBatchReader>> OpenFileBytes(std::shared_ptr<Buffer> bytes,
                                                                  const std::string& path, ReadOptions options);

  const SchemaPtr& schema() const override = 0;
  virtual IpcFormat format() const = 0;

  /// The next record batch, or nullptr at the end. Dictionary batches are
  /// applied on the way. After an error the reader should not be used.
  Result<RecordBatchPtr> Next() override = 0;

  /// With ReadOptions::collect_body_stats on: the body statistics of the
  /// last batch Next() returned (empty before the first; kept when Next()
  /// then returns nullptr or an error). Off: always an empty BatchBodyStats
  /// (zeros, kNone, no metadata, no columns). The reference is to the
  /// reader's own member: valid while the reader lives, its content
  /// replaced by the next batch.
  virtual const BatchBodyStats& last_batch_stats() const = 0;
  /// Dictionary batches read so far (initial, delta, replacement).
  virtual int64_t num_dictionary_batches() const = 0;
  virtual int64_t num_dictionary_deltas() const = 0;
  /// Schema-level metadata version of the input ("V4"/"V5").
  virtual std::string metadata_version() const = 0;
};

/// Reads every batch of a reader.
Result<std::vector<RecordBatchPtr>> ReadAllBatches(RecordBatchReader* reader);

}  // namespace quiver::ipc
