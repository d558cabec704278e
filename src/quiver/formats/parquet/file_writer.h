// quiver/formats/parquet/file_writer.h — Arrow record batches written as a
// Parquet file (parquet-format README "File Format": "PAR1", row groups of
// column chunks, the Thrift compact FileMetaData, its 4-byte little-endian
// length, "PAR1") through a formats::OutputSink, so the writer does no I/O
// itself. Types map as writer_schema.h says (docs/formats.md, "Writing
// Parquet"); pages and encodings as column_writer.h says.
//
// Batches are buffered (shared, not copied) until a row group is full —
// `row_group_rows` rows, or about `row_group_bytes` of the batches' Arrow
// buffers — then the row group is written column by column; the page
// indexes of its column chunks are kept (a few dozen bytes a page) and
// written before the footer. Memory (the
// dense values of one column chunk, the dictionary indices, one page, the
// compression scratch) comes from `WriterOptions::pool`.
//
// Not thread-safe (one writer, one thread at a time). The sink must
// outlive the writer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/formats/parquet/column_writer.h"
#include "quiver/formats/parquet/metadata.h"
#include "quiver/formats/parquet/writer_schema.h"
#include "quiver/formats/sink.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::parquet {

struct WriterOptions {
  /// Where the writer's memory comes from (required).
  MemoryPool* pool = nullptr;
  /// parquet.thrift CompressionCodec: UNCOMPRESSED, SNAPPY (default) or ZSTD.
  int32_t codec = static_cast<int32_t>(Codec::kSnappy);
  /// ZSTD level (1..22; default 3).
  int zstd_level = 3;
  /// A row group is cut after this many rows (default 122,880, DuckDB's)...
  int64_t row_group_rows = 122880;
  /// ...or once its buffered batches hold about this many Arrow buffer bytes.
  int64_t row_group_bytes = int64_t{128} << 20;
  /// Values per data page before compression (default 1 MiB), rows per page at most.
  int64_t data_page_bytes = 1 << 20;
  int64_t data_page_max_rows = 20000;
  /// Dictionary encoding, and the dictionary page size past which a chunk
  /// is written PLAIN instead (default 1 MiB).
  bool dictionary = true;
  int64_t dictionary_page_limit_bytes = 1 << 20;
  /// The page index (PageIndex.md: an OffsetIndex per column chunk, a
  /// ColumnIndex where its pages have statistics; column_writer.h), written
  /// after the last row group, before the footer (default on).
  bool page_index = true;
  /// FileMetaData.created_by.
  std::string created_by = "quiver";
};

/// Invalid naming the option when a value is out of range (pool missing,
/// codec not UNCOMPRESSED/SNAPPY/ZSTD, rows or bytes < 1, a zstd level
/// outside 1..22, page rows over 2^31 - 1).
Status ValidateWriterOptions(const WriterOptions& o);

/// Parses a codec name for the CLI: "snappy", "zstd", "none" /
/// "uncompressed" (any case). Invalid naming the accepted names.
Result<int32_t> ParseWriterCodec(const std::string& name);

struct WriterStats {
  int64_t num_rows = 0;
  int64_t num_row_groups = 0;
  int64_t file_bytes = 0;  ///< after Close
};

class FileWriter {
 public:
  /// Checks the options and maps every field (NotImplemented naming a field
  /// of a type the writer does not write); writes nothing yet.
  static Result<std::unique_ptr<FileWriter>> Make(SchemaPtr schema, formats::OutputSink* sink, WriterOptions options);

  /// Buffers `batch` (its schema's fields must match: Invalid otherwise)
  /// and writes every row group that fills. Empty batches are skipped.
  Status WriteBatch(const RecordBatchPtr& batch);
  /// Writes the rows still buffered as the last row group, then the footer.
  /// Call once; the writer is done after it (later calls: Invalid).
  Status Close();

  const WriterStats& stats() const { return stats_; }
  const FileMetaData& metadata() const { return metadata_; }

 private:
  FileWriter() = default;
  Status FlushRowGroup();
  Status WriteMagic();
  // Writes the page indexes kept (every ColumnIndex, then every
  // OffsetIndex, as parquet-mr) and points the column chunks at them.
  Status WritePageIndexes();

  SchemaPtr schema_;
  formats::OutputSink* sink_ = nullptr;
  WriterOptions options_;
  ColumnWriteOptions column_options_;
  std::vector<LeafMapping> leaves_;
  FileMetaData metadata_;
  std::vector<std::vector<ChunkPageIndex>> page_indexes_;  // per row group, per column
  std::vector<RecordBatchPtr> pending_;
  int64_t pending_rows_ = 0;
  int64_t pending_bytes_ = 0;
  bool started_ = false, closed_ = false;
  WriterStats stats_;
};

/// Writes `batches` (all of `schema`) to the local file `path` (created or
/// truncated; a failure leaves a partial file). Errors: as FileWriter and
/// LocalFileSink.
Result<WriterStats> WriteParquetFile(const std::string& path, const SchemaPtr& schema,
                                     const std::vector<RecordBatchPtr>& batches, const WriterOptions& options);

}  // namespace quiver::parquet
