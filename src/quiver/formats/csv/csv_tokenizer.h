// quiver/formats/csv/csv_tokenizer.h — CSV text split into rows of fields
// (RFC 4180 with the common variations; docs/csv.md "Inference rules" and
// "Errors"), over text that may stop in the middle of a row (a block of a
// streamed file, a byte range of a split one).
//
// Lines: the tokenizer counts physical lines: every LF, CRLF or lone CR
// ends one, inside quoted fields and blank lines too, so the line of any
// byte is 1 + the line ends before it (CsvLineEndsIn counts them), which is
// what lets a parallel parse name the line of an error.
//
// Blank lines (an empty line: a line end right at a row start) are
// skipped, as DuckDB's read_csv skips them, except in a table of one
// column (set_blank_lines_are_rows), where an empty line is a row of one
// empty field (a NULL) as DuckDB reads it: dropping it would lose a value.
// The caller that knows the column count says which.
//
// Thread safety: a Tokenizer is used by one thread; the functions are pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/formats/csv/csv_pool_array.h"

namespace quiver::formats::csv {

/// One field of a row: bytes [begin, end) of the text (inside the quotes
/// for a quoted field); `escaped` when it holds doubled quotes.
struct FieldRef {
  int64_t begin = 0;
  int64_t end = 0;
  bool quoted = false;
  bool escaped = false;
};

/// What Tokenizer::NextRow found.
enum class RowStatus {
  kRow,       ///< a row, into the caller's fields
  kEnd,       ///< no row: the text ends (only blank lines were left, when they are skipped)
  kNeedMore,  ///< the text ends inside a row (or a blank run) and more text may follow: nothing consumed
};

class Tokenizer {
 public:
  /// `text` from a row start, at 1-based line `first_line`. `at_end`: no
  /// more text follows (a last row needs no line end; a quoted field open
  /// at the end is an error); otherwise a row that reaches the end of
  /// `text` is kNeedMore. `source` names the input in errors.
  Tokenizer(std::string_view text, char delim, char quote, std::string_view source, int64_t first_line = 1,
            bool at_end = true);

  /// Blank lines as rows of one empty field (a table of one column), or
  /// skipped (the default). May change between rows.
  void set_blank_lines_are_rows(bool on) { blank_rows_ = on; }

  /// Rows store at most `n` fields in `out` (default: all); the rest are
  /// counted, not stored, so that a row of millions of delimiters costs no
  /// memory when the caller knows the width it expects. row_fields() is
  /// the last row's true count.
  void set_max_stored_fields(size_t n) { max_stored_ = n; }
  size_t row_fields() const { return row_fields_; }

  /// The next row (a blank line: see set_blank_lines_are_rows) appended to `out` (its fields; on kEnd and
  /// kNeedMore `out` is as it was) and its first line into `*row_line`. Errors (Invalid, naming the source, line and
  /// column): a quoted field not closed before the end (at_end only), a character after a closing quote that is not a
  /// delimiter or line end; OutOfMemory from a PoolArray's pool. `Fields`: std::vector<FieldRef> (a few rows, as
  /// the sniffer reads them) or PoolArray<FieldRef> (a converter's pool-charged scratch).
  template <typename Fields>
  Result<RowStatus> NextRow(Fields* out, int64_t* row_line);

  /// Byte offset (into the text) after the last row returned, and the line there.
  int64_t pos() const { return pos_; }
  int64_t line() const { return line_; }

 private:
  std::string_view t_;
  char delim_;
  char quote_;
  std::string_view source_;
  int64_t pos_ = 0;
  int64_t line_ = 1;
  bool at_end_ = true;
  bool blank_rows_ = false;
  size_t max_stored_ = SIZE_MAX;
  size_t row_fields_ = 0;
  bool stop_[256] = {};  // delimiter, LF, CR
};

/// `raw` with doubled quotes collapsed, into `scratch`.
std::string_view UnescapeField(std::string_view raw, char quote, std::string* scratch);

/// The text of a field, with doubled quotes collapsed into `scratch`.
inline std::string_view FieldText(std::string_view text, const FieldRef& f, char quote, std::string* scratch) {
  const std::string_view raw(text.data() + f.begin, static_cast<size_t>(f.end - f.begin));
  return f.escaped ? UnescapeField(raw, quote, scratch) : raw;
}

/// Line ends in `text` (LF, CRLF and lone CR each one; a CR that is the last
/// byte counts as one: split texts only at a position after an LF).
int64_t CsvLineEndsIn(std::string_view text);

/// "SOURCE: line N".
std::string CsvWhere(std::string_view source, int64_t line);

}  // namespace quiver::formats::csv
