// quiver/columnar/row_text.h — the rows of record batches as text, one line
// per row, in the formats of `quiver cat`, `quiver sql` and `quiver query`:
// a padded table, a pipe-separated table, CSV (RFC 4180) and JSON lines.
//
// Every value goes through FormatValue (quiver/columnar/value_format.h):
// kText for the tables and CSV, kJson for JSON lines. A null is a logical
// null (IsLogicalNull: a null index, a null dictionary value, a null run
// value, a null in the selected union child).
//
// Thread safety: RowTextWriter is not thread-safe (one writer per thread);
// the free functions are pure.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/array_data.h"
#include "quiver/columnar/data_type.h"

namespace quiver {

/// Output formats of RowTextWriter.
enum class RowTextFormat {
  /// Columns separated by " | ", each padded with spaces to the widest of
  /// its name and the values of the rows written together (at most 1000: a
  /// call's rows are cut into blocks of 1000), values longer than 60 bytes
  /// cut to 57 bytes and "..." (bytes, not characters); every block starts
  /// with the names and a "-+-" rule of dashes; nulls as "null".
  /// (`quiver cat` and `quiver query`, --format table.)
  kTable,
  /// Columns separated by " | ", not padded, values whole; the names once
  /// (WriteHeader); nulls as "NULL". (`quiver sql`, --format table.)
  kPipe,
  /// RFC 4180 fields (CsvField) separated by ",", the names once
  /// (WriteHeader); a null is an empty field (so is an empty string).
  kCsv,
  /// One JSON object per row: {"key":value,...} with the keys of
  /// UniqueJsonKeys (escaped as AppendJsonString does) and kJson values; no
  /// spaces, no header.
  kJsonl,
  /// Nothing at all (rows are only counted by the caller).
  kNone,
};

/// The format named `name`: "table", "pipe", "csv", "jsonl" or "none".
/// Errors: Invalid "unknown row text format '<name>'" for any other name.
Result<RowTextFormat> ParseRowTextFormat(std::string_view name);

/// One CSV field (RFC 4180): `text` as is, or in double quotes with inner
/// quotes doubled when it holds a comma, a quote, CR or LF.
std::string CsvField(std::string_view text);

/// The keys of a JSON-lines row for `schema`'s fields, unique so that no
/// value is lost when a JSON reader keeps one value per key: the first field
/// of a name keeps it, the k-th (k >= 2) becomes "name_k" (k raised further
/// while that collides with another field's name). E.g. a self-join's
/// `SELECT *` -> "k", "v", "k_2", "v_2". One key per field, in field order.
std::vector<std::string> UniqueJsonKeys(const Schema& schema);

/// Writes rows to a stdio stream, one fwrite per line (a table block's
/// header lines together). The stream is borrowed: it must outlive the
/// writer, which never flushes nor closes it. Write errors are not reported
/// (check ferror(out)); allocation failure throws std::bad_alloc as string
/// growth does.
class RowTextWriter {
 public:
  RowTextWriter(RowTextFormat format, std::FILE* out) : format_(format), out_(out) {}

  RowTextFormat format() const { return format_; }

  /// The line of column names for kCsv (CsvField of each name) and kPipe;
  /// nothing for the other formats (kTable repeats its header per block).
  /// Call once before the rows of a result.
  void WriteHeader(const Schema& schema);

  /// Rows [begin, end) of `batch`, 0 <= begin <= end <= batch.num_rows. The
  /// batch's columns must match its schema (RecordBatch::CheckShape) and pass
  /// ValidateArray(kFull), as FormatValue requires.
  void WriteRows(const RecordBatch& batch, int64_t begin, int64_t end);
  /// Every row of `batch`.
  void WriteRows(const RecordBatch& batch) { WriteRows(batch, 0, batch.num_rows); }

 private:
  void WriteTableBlock(const RecordBatch& batch, int64_t begin, int64_t end);
  void Put(const std::string& text);

  RowTextFormat format_;
  std::FILE* out_;
};

}  // namespace quiver
