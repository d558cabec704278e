// quiver/formats/csv/csv_reader.h — CSV text (RFC 4180 with the common
// variations) parsed from bytes into pool-accounted Arrow record batches.
//
// No I/O here: the caller hands the whole (decompressed) text in; the file
// front (csv_file.h) reads and decompresses. The reader sniffs the
// delimiter, the quote character and the header, infers a type per column
// over a sample of rows, then converts every row (docs/csv.md lists the
// rules). DuckDB's read_csv is the reference for the defaults.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
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
  /// int64, float64, date32, timestamp[us], utf8. Names absent from the
  /// header are an error.
  std::map<std::string, DataTypePtr> column_types;
};

/// A parsed CSV table: its schema (every field nullable) and its rows in
/// batches of at most CsvOptions::batch_rows rows (none for an empty text).
/// Buffers are owned by the pool passed to ParseCsv.
struct CsvTable {
  SchemaPtr schema;
  std::vector<RecordBatchPtr> batches;
  char delimiter = ',';
  char quote = '"';
  bool header = true;
  int64_t num_rows = 0;
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
/// "varchar", "utf8", "string"), case-insensitive. Errors: Invalid naming it.
Result<DataTypePtr> CsvTypeFromName(std::string_view name);

}  // namespace quiver::formats::csv
