// quiver/formats/parquet/file_reader.h — a Parquet file (parquet-format
// README "File Format": "PAR1", column chunks, the Thrift-encoded
// FileMetaData, its 4-byte little-endian length, "PAR1") read from a
// RandomAccessSource: the schema as Arrow fields (schema.h) and one record
// batch per row group with the columns asked for (projection: only their
// column chunks are read and decoded).
//
// Nested fields (lists, 2- and 3-level, maps, structs, any depth) are
// assembled from their leaf columns' levels (nested_assembly.h). Encrypted
// files ("PARE" footers, or encryption_algorithm in a plaintext footer, or
// encrypted column chunks) and column chunks stored in other files are
// NotImplemented, naming the column; every error
// names the source, and for data the row group, column and page.
//
// Reads: the footer (the file's last 8 bytes, then the metadata), then per
// row group only the column chunks (every leaf) of the fields asked for: one ReadAt per
// chunk from a local source; from a remote one (an object store,
// formats/s3_files.h) every chunk's range in one ReadRanges call, which
// merges adjacent ranges and fetches several at once.
//
// Thread safety: after Open, ReadRowGroup may be called from several
// threads at once (the source must allow concurrent ReadAt; each call
// uses the pool it is given).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/formats/parquet/metadata.h"
#include "quiver/formats/parquet/schema.h"
#include "quiver/formats/source.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::parquet {

class ColumnChunkReader;  // column_reader.h
class RowGroupSlices;
struct RowGroupPagePlan;  // page_filter.h
struct RowRange;          // page_filter.h

/// True when `head` (a file's first bytes) starts with the Parquet magic.
bool LooksLikeParquet(std::span<const uint8_t> head);

class FileReader {
 public:
  /// Reads and decodes the footer of `source` (its bytes from `pool`, kept
  /// while the footer is decoded). Errors: Invalid (not Parquet, a footer
  /// length outside the file, corrupt metadata, a schema that does not
  /// match the row groups), NotImplemented (encryption), IOError.
  /// `types`: how leaves map to Arrow types (schema.h).
  static Result<std::unique_ptr<FileReader>> Open(std::shared_ptr<formats::RandomAccessSource> source, MemoryPool* pool,
                                                  const ArrowTypeOptions& types = {});

  const SchemaPtr& schema() const { return schema_.arrow_schema; }
  const FileMetaData& metadata() const { return metadata_; }
  const ParquetSchema& parquet_schema() const { return schema_; }
  int num_row_groups() const { return static_cast<int>(metadata_.row_groups.size()); }
  /// Sum of the row groups' rows.
  int64_t num_rows() const { return num_rows_; }

  /// Row group `index` as a batch of the top-level fields `columns`
  /// (indices into schema(), in that order; empty = every field), decoded
  /// into buffers from `pool`. Errors: Invalid for a bad index or corrupt
  /// data, NotImplemented for unsupported features, both naming the row
  /// group, column and page; OutOfMemory; IOError.
  Result<RecordBatchPtr> ReadRowGroup(int index, const std::vector<int>& columns, MemoryPool* pool) const;

  /// Row group `index` to be decoded a slice of rows at a time (the
  /// morsels of a scan: a slice's buffers are small enough to stay in the
  /// cache while the next operator reads them, and a freed slice's memory
  /// is taken again by the next one). The column chunks of `columns` (as
  /// ReadRowGroup) are read from the source now and held by the result;
  /// flat columns are decoded in RowGroupSlices::Next, nested ones here,
  /// whole, and handed out in slices. Errors: as ReadRowGroup
  /// (those of decoding come from Next).
  Result<std::unique_ptr<RowGroupSlices>> OpenRowGroup(int index, const std::vector<int>& columns,
                                                       MemoryPool* pool) const;

  /// Rows `range` of row group `index` (one of plan.ranges, or a part of
  /// one; `plan` from PlanRowGroupPages for this row group and `columns`),
  /// as OpenRowGroup reads the whole row group: of each flat column with an
  /// offset index only the pages that hold rows of the range are read
  /// (its dictionary page, then one run of data pages: from a remote
  /// source every column's ranges in one ReadRanges call), decoded, and the
  /// rows before the range in its first page passed over; flat columns
  /// without an offset index are read whole and their rows before the
  /// range passed over; nested fields are read whole and sliced. The
  /// result's num_rows() is range.num_rows. Errors: as OpenRowGroup;
  /// Invalid for a range outside the row group.
  Result<std::unique_ptr<RowGroupSlices>> OpenRowGroupRange(int index, const std::vector<int>& columns,
                                                            const RowGroupPagePlan& plan, RowRange range,
                                                            MemoryPool* pool) const;

  /// The schema of a projection (the fields `columns`, as ReadRowGroup).
  Result<SchemaPtr> ProjectedSchema(const std::vector<int>& columns) const;

  /// Column chunks ReadRowGroup has read (and decoded, or failed to) since
  /// Open, and the bytes of them read from the source (compressed, page
  /// headers included; the footer not counted). Thread-safe (relaxed
  /// counters: exact once the reads they count have returned).
  int64_t column_chunks_read() const { return column_chunks_read_.load(std::memory_order_relaxed); }
  int64_t bytes_read() const { return bytes_read_.load(std::memory_order_relaxed); }
  /// Data pages OpenRowGroupRange has read from the columns it read by
  /// their offset index (pages of other reads are not counted).
  int64_t pages_read() const { return pages_read_.load(std::memory_order_relaxed); }
  /// The source the reader reads (its name() names the file in errors).
  const formats::RandomAccessSource& source() const { return *source_; }
  /// The same, shared (to read from it: ReadAt is not const).
  const std::shared_ptr<formats::RandomAccessSource>& shared_source() const { return source_; }

  /// The bytes of column chunk (row_group, leaf) (from its dictionary or
  /// first data page for total_compressed_size bytes), checked against the
  /// file. Errors: Invalid (outside the file, no metadata), NotImplemented
  /// (a chunk in another file, or encrypted). `row_group` and `leaf` must
  /// be valid indices.
  Result<formats::ByteRange> ChunkRange(int row_group, int leaf) const;

 private:
  FileReader() = default;
  // Top-level field `field` (flat, or assembled from its leaf columns).
  // `prefetched`: the bytes of its leaf chunks when the caller read them
  // already (taken from the span), else empty.
  Result<ArrayDataPtr> ReadColumn(int row_group, int field, MemoryPool* pool,
                                  std::span<std::shared_ptr<Buffer>> prefetched) const;
  // The bytes of leaf column chunk (row_group, leaf), counted as read
  // (`prefetched`: the bytes when the caller read them already).
  Result<std::shared_ptr<Buffer>> LeafChunk(int row_group, int leaf, MemoryPool* pool,
                                            std::shared_ptr<Buffer> prefetched) const;

  std::shared_ptr<formats::RandomAccessSource> source_;
  FileMetaData metadata_;
  ParquetSchema schema_;
  int64_t num_rows_ = 0;
  mutable std::atomic<int64_t> column_chunks_read_{0};
  mutable std::atomic<int64_t> bytes_read_{0};
  mutable std::atomic<int64_t> pages_read_{0};
};

/// A row group read in slices (FileReader::OpenRowGroup): each Next
/// decodes the next rows of every chosen column from where the previous
/// call stopped (resuming inside a page) into new buffers from the pool.
/// Ownership: holds the column chunks' bytes and the decompressed pages it
/// is in; the FileReader must outlive it. Not thread-safe (one thread at a
/// time; distinct RowGroupSlices may be used at once).
class RowGroupSlices {
 public:
  ~RowGroupSlices();
  /// The next min(max_rows, rows_left()) rows (max_rows > 0) as a batch of
  /// the projected schema, or nullptr once every row was returned. Errors:
  /// as ReadRowGroup (naming the row group, column and page); after one,
  /// the object must not be used again.
  Result<RecordBatchPtr> Next(int64_t max_rows);
  /// Rows not yet returned.
  int64_t rows_left() const { return rows_left_; }
  int64_t num_rows() const { return num_rows_; }

 private:
  friend class FileReader;
  RowGroupSlices();
  SchemaPtr schema_;
  std::vector<std::unique_ptr<ColumnChunkReader>> columns_;  // null for nested fields
  std::vector<ArrayDataPtr> nested_;                         // nested fields, whole (else null)
  std::vector<std::string> where_;                           // "FILE: row group G, column 'C'"
  std::vector<int64_t> skip_;  // per column: rows to pass over before the first (OpenRowGroupRange)
  int64_t nested_first_ = 0;   // the row of the nested arrays the first row returned is
  int64_t num_rows_ = 0;
  int64_t rows_left_ = 0;
};

/// Opens the local file `path` and reads every row group (all columns),
/// each batch validated in full (ValidateBatch kFull: offsets, UTF-8).
/// For whole-table loads (the CLI's catalog, `quiver cat`). Errors: as
/// Open and ReadRowGroup.
struct ParquetTable {
  SchemaPtr schema;
  std::vector<RecordBatchPtr> batches;
};
Result<ParquetTable> ReadParquetFile(const std::string& path, MemoryPool* pool, const ArrowTypeOptions& types = {});
/// The same over any source (e.g. an object in an S3 store).
Result<ParquetTable> ReadParquetSource(std::shared_ptr<formats::RandomAccessSource> source, MemoryPool* pool,
                                       const ArrowTypeOptions& types = {});

/// True when the local file `path` starts with "PAR1" (false when it
/// cannot be read).
bool IsParquetFile(const std::string& path);

}  // namespace quiver::parquet
