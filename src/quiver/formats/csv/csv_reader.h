// quiver/formats/csv/csv_reader.h — CSV text (RFC 4180 with the common
// variations) parsed from bytes into pool-accounted Arrow record batches.
//
// No I/O here: the caller hands text in; the file fronts (csv_file.h,
// csv_stream.h, csv_ranges.h) read and decompress. InferCsvLayout sniffs
// the delimiter, the quote character and the header and infers a type per
// column over a sample of rows at the head of the text; CsvRowConverter
// then converts rows of any later piece of the text (docs/csv.md lists the
// rules). DuckDB's read_csv is the reference for the defaults.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/formats/csv/csv_pool_array.h"
#include "quiver/formats/csv/csv_tokenizer.h"
#include "quiver/memory/memory_pool.h"

namespace quiver::formats::csv {

/// Whether the first row names the columns.
enum class HeaderMode { kAuto, kPresent, kAbsent };

/// Options of ParseCsv. Defaults sniff everything.
struct CsvOptions {
  /// Field delimiter; '\0' = sniff among ',', ';', '\t' and '|'.
  char delimiter = '\0';
  /// Quote character; '\0' = sniff ('"' unless the text quotes with '\''
  /// and never with '"'). A quote inside a quoted field is written twice.
  char quote = '\0';
  HeaderMode header = HeaderMode::kAuto;
  /// Unquoted field texts read as NULL (an empty unquoted field always is).
  std::vector<std::string> null_values;
  /// Rows (after the header) that type inference looks at; >= 1.
  int64_t sample_rows = 20480;
  /// Rows per output batch; 1 .. 2^24.
  int64_t batch_rows = 65536;
  /// Column name -> type, overriding inference. Supported types: boolean,
  /// int64, float64, date32, timestamp[us], utf8, decimal128(p, s) (values
  /// rounded half away from zero to s digits; more than p digits is an
  /// error naming the line). Names absent from the header are an error.
  std::map<std::string, DataTypePtr> column_types;
  /// Types of the first columns by position (DuckDB's `types = [...]`),
  /// the same types as column_types, applied before it; more types than
  /// columns is an error.
  std::vector<DataTypePtr> column_types_by_position;
};

/// A parsed CSV table: its schema (every field nullable; CsvLayout's for an
/// empty text) and its rows in batches of at most CsvOptions::batch_rows
/// rows (none for an empty text or a header only).
/// Buffers are owned by the pool passed to ParseCsv.
struct CsvTable {
  SchemaPtr schema;
  std::vector<RecordBatchPtr> batches;
  char delimiter = ',';
  char quote = '"';
  bool header = true;
  int64_t num_rows = 0;
};

/// What the head of a CSV text says: the dialect, the schema, and where the
/// data rows start.
struct CsvLayout {
  /// Every field nullable. A text with no line (0 bytes or a byte order
  /// mark only) has one utf8 field "column0" and no rows, as in DuckDB's
  /// read_csv; `empty_text` says so (a table of several files takes its
  /// columns from the others). A text of blank lines only has one utf8
  /// field "column0" whose rows are its blank lines (NULLs), the first
  /// blank line being the header unless the options say kAbsent: "\n\n\n"
  /// is two NULL rows (three with kAbsent), as DuckDB reads it.
  SchemaPtr schema;
  bool empty_text = false;
  char delimiter = ',';
  char quote = '"';
  bool header = true;
  /// Byte offset (into the text, byte order mark included) of the first
  /// data row, and its 1-based line.
  int64_t data_offset = 0;
  int64_t data_line = 1;
  /// Mean bytes per row of the rows sampled (0 when none): row estimates.
  double row_bytes = 0;
};

/// Sniffs and infers over `head`, the first bytes of a text (all of it when
/// `head_is_all`; otherwise a row cut by the end of `head` is left out of
/// the sample). Errors: as ParseCsv for the rows it reads; Invalid when the
/// first row does not end inside `head` (and head is not all of the text).
Result<CsvLayout> InferCsvLayout(std::string_view head, bool head_is_all, const CsvOptions& options,
                                 std::string_view source);

/// The scratch of one CsvRowConverter::Convert call at a time: the field
/// positions (24 bytes a field) and lines of the rows of one batch, charged
/// to the pool given (several MiB for a 2 MiB range of short fields). Keep
/// one per thread and pass it to every call, so that the pages are reused;
/// its bytes go back to the pool when it is destroyed (the CSV scans hold
/// one per thread until the scan of a file ends). Thread safety: one call
/// at a time.
struct CsvRowScratch {
  explicit CsvRowScratch(MemoryPool* pool) : fields(pool), lines(pool) {}
  PoolArray<FieldRef> fields;
  PoolArray<int64_t> lines;
  int64_t capacity_bytes() const { return fields.capacity_bytes() + lines.capacity_bytes(); }
};

/// Converts rows of a CSV text of a known layout into record batches.
/// Thread safety: Convert may be called from several threads at once, each
/// with its own scratch.
class CsvRowConverter {
 public:
  /// `columns`: the schema's columns to build (the others are null
  /// pointers in the batches; none: a count of rows); nullopt = all.
  /// Options as given to InferCsvLayout (null values; batch_rows bounds
  /// each batch).
  CsvRowConverter(CsvLayout layout, CsvOptions options, std::optional<std::vector<int>> columns = std::nullopt);

  /// What one Convert call read.
  struct Chunk {
    std::vector<RecordBatchPtr> batches;
    int64_t rows = 0;
    /// Bytes of `text` consumed (up to the first row not converted) and
    /// the line there.
    int64_t consumed_bytes = 0;
    int64_t end_line = 1;
  };

  /// Converts the rows of `text` (which starts at a row start, at line
  /// `first_line`). `at_end`: nothing
  /// follows the text (a last row without a line end is whole); otherwise
  /// a row the text cuts is left for the next call. Buffers come from
  /// `pool`; the field positions go to `scratch` (nullptr: a scratch of
  /// `pool` for this call). Errors: ParseCsv's (lines counted from
  /// `first_line`); OutOfMemory from `pool` or the scratch's pool.
  Result<Chunk> Convert(std::string_view text, int64_t first_line, bool at_end, MemoryPool* pool,
                        std::string_view source, CsvRowScratch* scratch = nullptr) const;

  /// A batch of no rows (the chosen columns empty arrays). Errors: OutOfMemory.
  Result<RecordBatchPtr> EmptyBatch(MemoryPool* pool) const;

  const CsvLayout& layout() const { return layout_; }
  const CsvOptions& options() const { return options_; }

 private:
  CsvLayout layout_;
  CsvOptions options_;
  std::vector<int> columns_;
};

/// Parses `text` (UTF-8 CSV; LF or CRLF line ends; a UTF-8 byte order mark
/// is skipped). `source` names the input in errors ("orders.csv").
/// Errors (Invalid), each naming `source`, the 1-based line and, where one
/// is at fault, the 1-based column and its name: a quoted field not closed
/// before the end, a character after a closing quote that is not a
/// delimiter or line end, a row with a different number of fields than the
/// first, a value that does not convert to its column's (inferred or
/// overridden) type, an override naming no column or using an unsupported
/// type, a string column over 2 GiB in one batch; bad options. OutOfMemory
/// from `pool`. Thread safety: pure; concurrent calls are safe.
Result<CsvTable> ParseCsv(std::string_view text, const CsvOptions& options, MemoryPool* pool,
                          std::string_view source = "csv");

/// The type named by `name` for CsvOptions::column_types ("int64", "bigint",
/// "double", "float64", "bool", "boolean", "date", "date32", "timestamp",
/// "varchar", "utf8", "string", "decimal(p, s)", "numeric(p, s)", "decimal"
/// = DECIMAL(18, 3) as in DuckDB), case-insensitive. Errors: Invalid naming
/// it (also a precision outside 1..38 or a scale outside 0..precision).
Result<DataTypePtr> CsvTypeFromName(std::string_view name);

}  // namespace quiver::formats::csv
