// quiver/ipc/writer.h — Arrow IPC stream and file writing.
//
// Writes encapsulated messages (continuation marker, int32 metadata length,
// Message flatbuffer padded so that the body starts 8-byte aligned, body
// buffers each padded to 8 bytes), metadata V5, dictionary batches before
// the batches that use them (initial, delta when the new dictionary extends
// the last one written, replacement otherwise — streams only), the
// end-of-stream marker, and for the file format the ARROW1 magic and the
// Footer with its Blocks (spec: "Serialization and Interprocess
// Communication", "IPC File Format").
//
// Body compression (Message.fbs BodyCompression, method BUFFER): each
// buffer becomes an 8-byte little-endian uncompressed length followed by one
// LZ4 frame or ZSTD frame; a buffer is stored raw with the -1 prefix when
// compression does not save at least options.min_space_saving of it;
// zero-length buffers stay zero-length regions. Each compressed output ends
// in a buffer of its own size (shrunk in place or copied), never in its
// worst-case bound.
//
// Memory: compacted slices, compressed buffers and scratch come from
// options.pool and are released when the batch has been written (also on
// error). Thread safety: one writer per thread.
#pragma once

#include <cstdint>
#include <memory>

#include "quiver/columnar/array_data.h"
#include "quiver/ipc/batch_unloader.h"
#include "quiver/ipc/io.h"
#include "quiver/ipc/options.h"
#include "quiver/ipc/reader.h"

namespace quiver::ipc {

/// What a writer has written so far.
struct WriteStats {
  int64_t num_batches = 0;
  int64_t num_dictionary_batches = 0;
  int64_t num_dictionary_deltas = 0;
  int64_t num_rows = 0;
  int64_t uncompressed_body_bytes = 0;  ///< buffer bytes before compression
  int64_t body_bytes = 0;               ///< body bytes written (after compression, padding included)
  int64_t total_bytes = 0;              ///< everything written to the sink
};

class RecordBatchWriter {
 public:
  /// Makes a writer that writes the schema message (and, for files, the
  /// magic) to `sink` at once. `sink` must outlive the writer. Errors:
  /// Invalid for options (unknown codec, level out of range, a per-column
  /// codec naming no column or disagreeing with the batch codec), IOError
  /// from the sink.
  static Result<std::unique_ptr<RecordBatchWriter>> Make(OutputStream* sink, SchemaPtr schema, IpcFormat format,
                                                         WriteOptions options);
  virtual ~RecordBatchWriter() = default;

  /// Writes one batch (and the dictionary batches it needs first). The
  /// batch's schema must equal the writer's (types and names). On error
  /// nothing stays allocated from the pool; the sink may hold a partial
  /// message.
  virtual Status WriteBatch(const RecordBatch& batch) = 0;

  /// Writes a batch unloaded by a BatchUnloader with this writer's codec
  /// (the unloaded batch keeps its compressed buffers until it is
  /// destroyed). Only for schemas without dictionary fields (Invalid
  /// otherwise: dictionaries are written by WriteBatch).
  virtual Status WriteUnloaded(const UnloadedBatch& batch) = 0;

  /// Writes the end-of-stream marker (and the footer for files). Idempotent.
  virtual Status Close() = 0;

  virtual const WriteStats& stats() const = 0;
  /// The codec level really used (the codec default resolved), or 0 for none.
  virtual int codec_level() const = 0;
};

/// Writes `batches` as one stream or file to `sink`, splitting each batch
/// into pieces of at most `max_rows_per_batch` rows (<= 0: no limit).
Status WriteTable(OutputStream* sink, const SchemaPtr& schema, const std::vector<RecordBatchPtr>& batches,
                  IpcFormat format, const WriteOptions& options, int64_t max_rows_per_batch = 0,
                  WriteStats* stats = nullptr);

}  // namespace quiver::ipc
