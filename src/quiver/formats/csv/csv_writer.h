// quiver/formats/csv/csv_writer.h — record batches written as CSV text
// (RFC 4180), plain or compressed (gzip, zstd), into a formats::OutputSink
// (issue 36: tables "queried in place and written back": `quiver sql -o
// out.csv`, `quiver convert in.parquet out.csv.zst`).
//
// The text: a header line of the field names (optional), then one line per
// row, fields separated by the delimiter and ended by "\n". A value is its
// FormatValue(kText) text (quiver/columnar/value_format.h: decimals with
// their scale, dates YYYY-MM-DD, timestamps ISO 8601, floats shortest
// round-trip); a NULL is an empty unquoted field and an empty string is
// `""`, so the two stay apart when read back (by quiver's reader and by
// DuckDB's read_csv, which treat an empty unquoted field as NULL). A field is
// quoted (inner quotes doubled) when it is empty or holds the delimiter, a
// quote, CR or LF, as RFC 4180 section 2 rules 6 and 7 ask.
//
// Memory: one text buffer of `buffer_bytes` and, compressed, one output
// buffer of 256 KiB, both from `pool`; the codec's own context (zlib ~270
// KiB, zstd ~1-2 MiB at level 3) comes from malloc. A value is formatted
// into a small reused string, so no row is held whole however long.
//
// Thread safety: one writer per thread; the sink is borrowed and must
// outlive the writer.
#pragma once

#include <cstdint>
#include <memory>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/columnar/data_type.h"
#include "quiver/formats/csv/csv_file.h"
#include "quiver/formats/sink.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::formats::csv {

struct CsvWriteOptions {
  /// Field delimiter; any byte but '"', CR and LF.
  char delimiter = ',';
  /// Write the field names as the first line.
  bool header = true;
  /// The codec of the whole file (CsvCompressionOf(path) picks it from a
  /// name ending ".gz" / ".zst"): gzip as one member (zlib, RFC 1952),
  /// zstd as one frame.
  CsvCompression compression = CsvCompression::kNone;
  /// Codec level; 0 = the codec's default (gzip 6, zstd 3).
  int level = 0;
  /// Text buffered before it is compressed or written (>= 4 KiB).
  int64_t buffer_bytes = int64_t{1} << 20;
  /// Where the buffers come from (required).
  MemoryPool* pool = nullptr;
};

/// Counts after Close (during writing: so far).
struct CsvWriteStats {
  int64_t num_rows = 0;
  int64_t text_bytes = 0;  ///< CSV text, header included, before compression
  int64_t file_bytes = 0;  ///< bytes given to the sink
};

class CsvWriter {
 public:
  /// A writer of `schema`'s rows into `sink`; writes nothing yet (the header
  /// goes out with the first batch or at Close). Errors: Invalid for a
  /// delimiter that is '"', CR or LF, a buffer under 4 KiB or no pool;
  /// OutOfMemory; the codec's initialisation failure as IOError.
  static Result<std::unique_ptr<CsvWriter>> Make(SchemaPtr schema, OutputSink* sink, CsvWriteOptions options);
  ~CsvWriter();
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  /// Appends the rows of `batch`, whose columns must match the schema given
  /// to Make (Invalid naming the column otherwise) and be valid arrays.
  /// Errors: the sink's; the codec's as IOError; OutOfMemory.
  Status WriteBatch(const RecordBatch& batch);
  /// Writes what is buffered, ends the compressed stream and leaves the sink
  /// open (the caller commits or closes it). Further calls are errors.
  Status Close();

  const CsvWriteStats& stats() const { return stats_; }

 private:
  class Codec;
  CsvWriter(SchemaPtr schema, OutputSink* sink, CsvWriteOptions options);
  Status WriteHeader();
  Status Append(const char* data, int64_t size);
  Status AppendField(std::string_view text);
  Status Flush(bool end);

  SchemaPtr schema_;
  OutputSink* sink_;
  CsvWriteOptions options_;
  std::shared_ptr<Buffer> text_;
  int64_t used_ = 0;
  std::unique_ptr<Codec> codec_;
  std::string cell_;
  bool header_done_ = false;
  bool closed_ = false;
  CsvWriteStats stats_;
};

}  // namespace quiver::formats::csv
