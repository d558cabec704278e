// quiver/formats/parquet/column_reader.h — one column chunk's pages decoded
// into an Arrow array (parquet-format README "Column chunks", "Nulls";
// Encodings.md): definition levels become the validity bitmap, values are
// decoded by the page's encoding and converted from their physical type to
// the field's Arrow type (schema.h; docs/formats.md).
//
// Every output buffer comes from the caller's pool, grown as pages are
// decoded (never sized from a count the file claims alone; the pool's limit
// bounds a file that claims many values in few bytes). Errors name the
// page and what was wrong; the caller adds the row group and column.
// Pure over its inputs; thread-safe for distinct chunks.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/formats/parquet/metadata.h"
#include "quiver/formats/parquet/schema.h"
#include "quiver/memory/buffer.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::parquet {

struct LeafLevels;

/// A flat column chunk (as ReadFlatColumnChunk) decoded a slice of rows at
/// a time: Read(n) continues where the previous call stopped (inside a
/// page: the page's decompressed body and its level and value decoders are
/// kept), so a row group is decoded in morsels whose buffers stay small.
/// Each slice's buffers are new ones from the pool. Not thread-safe.
class ColumnChunkReader {
 public:
  /// Arguments as ReadFlatColumnChunk's; `leaf` must outlive the reader.
  /// Errors: NotImplemented for nested columns (nothing is decoded yet).
  static Result<std::unique_ptr<ColumnChunkReader>> Make(const SchemaNode& leaf, const ColumnMetaData& meta,
                                                         std::shared_ptr<Buffer> chunk, int64_t num_rows,
                                                         DataTypePtr type, MemoryPool* pool);
  /// The same over a chunk read in parts (PageReader's segments: the
  /// dictionary page, then the runs of data pages a page index selected);
  /// `num_rows`: the rows of those pages.
  static Result<std::unique_ptr<ColumnChunkReader>> Make(const SchemaNode& leaf, const ColumnMetaData& meta,
                                                         std::vector<std::shared_ptr<Buffer>> chunk, int64_t num_rows,
                                                         DataTypePtr type, MemoryPool* pool);
  ~ColumnChunkReader();
  /// The next min(rows, rows_left()) rows as an array of the type. When
  /// the last row is returned the chunk's remaining pages are checked to
  /// hold no more values. Errors: as ReadFlatColumnChunk; after one the
  /// reader must not be used again.
  Result<ArrayDataPtr> Read(int64_t rows);
  /// Passes over the next min(rows, rows_left()) rows (decoded and dropped,
  /// 64 Ki rows at a time). Errors: as Read.
  Status Skip(int64_t rows);
  int64_t rows_left() const;

 private:
  // ReadLeafColumnChunk decodes a nested leaf with the same State.
  friend Result<LeafLevels> ReadLeafColumnChunk(const SchemaNode& leaf, const ColumnMetaData& meta,
                                                std::shared_ptr<Buffer> chunk, int64_t num_rows,
                                                const DataTypePtr& type, MemoryPool* pool);
  struct State;
  explicit ColumnChunkReader(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

/// Reads a flat column (a top-level primitive, required or optional: max
/// repetition level 0, max definition level 0 or 1) of `num_rows` rows
/// from `chunk` (the column chunk's bytes, all pages) into an array of
/// `type` (LeafArrowType of the leaf). `meta`: the chunk's metadata (codec,
/// physical type). Errors: Invalid (corrupt pages, value counts that do not
/// add up to num_rows), NotImplemented (an encoding or codec), OutOfMemory.
Result<ArrayDataPtr> ReadFlatColumnChunk(const SchemaNode& leaf, const ColumnMetaData& meta,
                                         std::shared_ptr<Buffer> chunk, int64_t num_rows, const DataTypePtr& type,
                                         MemoryPool* pool);

/// One leaf column chunk of a nested field (any max repetition and
/// definition level): `count` level entries (one per value slot the writer
/// wrote, NULLs and empty or NULL lists above the leaf included), each
/// entry's repetition and definition level (one byte each, checked against
/// the leaf's maxima), and `values`: an array of the leaf's type with one
/// slot per entry, NULL where the definition level is below the leaf's
/// maximum. Rows are entries with repetition level 0 and must number
/// `num_rows`; the first entry must start a row. Buffers from `pool`.
struct LeafLevels {
  int64_t count = 0;
  std::shared_ptr<Buffer> rep, def;
  ArrayDataPtr values;
};

/// Reads a leaf column chunk of a nested field (nested_assembly.h turns
/// the leaves of a field into its array). Errors as ReadFlatColumnChunk.
Result<LeafLevels> ReadLeafColumnChunk(const SchemaNode& leaf, const ColumnMetaData& meta,
                                       std::shared_ptr<Buffer> chunk, int64_t num_rows, const DataTypePtr& type,
                                       MemoryPool* pool);

}  // namespace quiver::parquet
