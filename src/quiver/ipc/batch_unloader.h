// quiver/ipc/batch_unloader.h — turns a record batch into the parts of an
// IPC RecordBatch message: field nodes, body regions (compressed or not)
// and variadic buffer counts (Arrow Java VectorUnloader ->
// ArrowRecordBatch). The compressed buffers of a batch are held by the
// UnloadedBatch until it is serialized (RecordBatchWriter::WriteUnloaded)
// or destroyed.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "quiver/columnar/array_data.h"
#include "quiver/compression/body_compressor.h"

namespace quiver::ipc {

/// Message.fbs FieldNode: one per array, depth-first.
struct FieldNodeInfo {
  int64_t length = 0;
  int64_t null_count = 0;
};

struct UnloadedBatch {
  int64_t num_rows = 0;
  std::vector<FieldNodeInfo> nodes;
  /// One region per IPC buffer, depth-first (Columnar format "Buffer
  /// Listing for Each Layout").
  std::vector<CompressedRegion> regions;
  std::vector<int64_t> variadic_buffer_counts;
  /// kNone when the batch is written without BodyCompression.
  CompressionType codec = CompressionType::kNone;
  int codec_level = 0;
  /// Sum of the input buffers' sizes (before compression).
  int64_t uncompressed_bytes = 0;

  /// Body length: every region padded to 8 bytes.
  int64_t body_bytes() const;
  /// Sum of the regions' compressed region sizes (no padding).
  int64_t region_bytes() const;
  /// Memory the batch holds of its own: the capacities of its compressed
  /// output buffers (raw and uncompressed regions share the input).
  int64_t held_bytes() const;
};

/// Not thread-safe (the compressor is per thread); batches are read-only.
class BatchUnloader {
 public:
  /// `pool` is charged for compacting sliced arrays. `compressor` may be
  /// null (no body compression); it must outlive the unloader.
  /// `column_compressed[i]` false stores top-level column i raw (-1) inside
  /// a compressed batch; empty = every column compressed.
  BatchUnloader(MemoryPool* pool, BufferCompressor* compressor, std::vector<bool> column_compressed = {})
      : pool_(pool), compressor_(compressor), column_compressed_(std::move(column_compressed)) {}

  /// Unloads `columns` (a batch's columns, or one dictionary's values) of
  /// `num_rows` rows. On error every buffer made so far is released.
  Result<UnloadedBatch> Unload(const std::vector<ArrayDataPtr>& columns, int64_t num_rows);
  Result<UnloadedBatch> Unload(const RecordBatch& batch) { return Unload(batch.columns, batch.num_rows); }

 private:
  MemoryPool* pool_;
  BufferCompressor* compressor_;
  std::vector<bool> column_compressed_;
};

}  // namespace quiver::ipc
