#include "quiver/formats/csv/csv_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <span>
#include <tuple>
#include <utility>

#include "quiver/base/bit_util.h"
#include "quiver/formats/csv/csv_tokenizer.h"
#include "quiver/formats/csv/csv_values.h"

namespace quiver::formats::csv {
namespace {

enum Kind : unsigned { kBool = 1, kInt = 2, kDouble = 4, kDate = 8, kTimestamp = 16, kAllKinds = 31 };

unsigned KindsOf(std::string_view s) {
  unsigned k = 0;
  bool b;
  int64_t i;
  double d;
  int32_t days;
  if (ParseCsvBool(s, &b)) k |= kBool;
  if (ParseCsvInt64(s, &i)) k |= kInt;
  if (ParseCsvDouble(s, &d)) k |= kDouble;
  if (ParseCsvDate(s, &days)) k |= kDate;
  if (ParseCsvTimestamp(s, &i)) k |= kTimestamp;
  return k;
}

DataTypePtr TypeOfKinds(unsigned k, bool seen) {
  if (!seen) return utf8();
  if (k & kBool) return boolean();
  if (k & kInt) return int64();
  if (k & kDouble) return float64();
  if (k & kDate) return date32();
  if (k & kTimestamp) return timestamp(TimeUnit::kMicro);
  return utf8();
}

bool IsNull(std::string_view s, const FieldRef& f, const CsvOptions& o, bool string_column) {
  if (f.quoted) return !string_column && s.empty();
  if (s.empty()) return true;
  return std::find(o.null_values.begin(), o.null_values.end(), s) != o.null_values.end();
}

// How one (delimiter, quote) candidate splits the head of a text.
struct DialectTrial {
  bool valid = false;   // no error, every row of the first row's width
  size_t fields = 0;    // the first row's width
  int64_t quoted = 0;   // fields that the quote wrapped
  int64_t rows_ok = 0;  // rows before an error or a row of another width
};

// Tokenizes up to `max_rows` rows of `text` with one candidate.
DialectTrial TryDialect(std::string_view text, bool at_end, char delim, char quote, std::string_view source,
                        int max_rows) {
  DialectTrial trial;
  Tokenizer tok(text, delim, quote, source, 1, at_end);
  tok.set_max_stored_fields(4096);  // counts, not positions, decide (a row of a million delimiters stores 4,096)
  std::vector<FieldRef> row;
  int64_t line = 0;
  for (int r = 0; r < max_rows; ++r) {
    row.clear();
    auto more = tok.NextRow(&row, &line);
    if (!more.ok()) return trial;  // the quote does not wrap whole fields
    if (*more != RowStatus::kRow) break;
    if (r == 0) {
      trial.fields = tok.row_fields();
      tok.set_blank_lines_are_rows(trial.fields == 1);
    }
    if (tok.row_fields() != trial.fields) return trial;
    for (const FieldRef& f : row) trial.quoted += f.quoted ? 1 : 0;
    ++trial.rows_ok;
  }
  trial.valid = true;
  return trial;
}

// The delimiter and quote: of the candidates (',' ';' tab '|' x '"' '\'',
// or those the options fix), those whose first 64 rows parse without an
// error with the same number of fields on each are valid (a quote at a
// field start that does not close right before a delimiter or line end is
// an error, so a value like '90s does not make ' the quote); of those, one
// whose quote wraps fields of rows of several fields beats one whose quote
// never does (a "b,c" header read with '"' over the same read with '\'',
// which splits it), then the most fields, then '"' and ',' first. DuckDB's
// sniffer chooses so on the tests' texts. ' must wrap a field to be
// chosen. A one-column text whose values hold commas ("Smith, John") reads
// with the first delimiter that splits no row, as in DuckDB. None valid: '"' and the delimiter of most fields on the
// rows before the error (the parse then names it; DuckDB would read a stray quote as text, quiver names it).
std::pair<char, char> SniffDialect(std::string_view text, bool at_end, const CsvOptions& o, std::string_view source) {
  static constexpr char kDelims[] = {',', ';', '\t', '|'};
  static constexpr char kQuotes[] = {'"', '\''};
  constexpr int kRows = 64;
  std::vector<char> delims =
      o.delimiter ? std::vector<char>{o.delimiter} : std::vector<char>(std::begin(kDelims), std::end(kDelims));
  std::vector<char> quotes =
      o.quote ? std::vector<char>{o.quote} : std::vector<char>(std::begin(kQuotes), std::end(kQuotes));
  char best_delim = o.delimiter ? o.delimiter : ',';
  char best_quote = o.quote ? o.quote : '"';
  bool found = false;
  DialectTrial best;
  char fallback_delim = best_delim;
  size_t fallback_fields = 0;
  for (char q : quotes) {
    for (char d : delims) {
      if (d == q) continue;
      const DialectTrial t = TryDialect(text, at_end, d, q, source, kRows);
      if (q == quotes[0] && t.rows_ok > 0 && t.fields > 1 && t.fields > fallback_fields) {
        fallback_delim = d;
        fallback_fields = t.fields;
      }
      // Valid; a quote other than '"' only where it wraps fields (else
      // the text does not say it is the quote: '"' is kept, and a text
      // that fails with '"' fails in the parse, naming the line).
      if (!t.valid || (q != '"' && !o.quote && t.quoted == 0)) continue;
      // Better: a quote that wraps fields of a split row, then more
      // fields, then the earlier candidate ('"' before '\'', ',' first).
      const bool used = t.quoted > 0 && t.fields > 1;
      const bool best_used = best.quoted > 0 && best.fields > 1;
      const bool better = !found || (used && !best_used) || (used == best_used && t.fields > best.fields);
      if (better) {
        found = true;
        best = t;
        best_delim = d;
        best_quote = q;
      }
    }
  }
  // One field on every row, while a delimiter split the first rows into
  // several before a row failed: that delimiter (the parse names the row).
  // Else ',' when it is valid (the first candidate), or the first that is
  // (a one-column file whose values hold commas).
  if (!found || (best.fields <= 1 && fallback_fields > 1)) return {fallback_delim, o.quote ? o.quote : '"'};
  return {best_delim, best_quote};
}

std::string ColumnLabel(const Schema& schema, size_t c) {
  return "column " + std::to_string(c + 1) + " ('" + schema.fields[c]->name + "')";
}

// Builds one column of `rows` rows from fields [r * ncols + c].
Result<ArrayDataPtr> BuildColumn(std::string_view text, const FieldRef* fields, std::span<const int64_t> lines,
                                 size_t ncols, size_t c, const Schema& schema, const CsvOptions& o, char quote,
                                 MemoryPool* pool, std::string_view source) {
  const DataTypePtr& type = schema.fields[c]->type;
  const int64_t rows = static_cast<int64_t>(lines.size());
  const bool is_string = type->id == TypeId::kUtf8;
  auto out = std::make_shared<ArrayData>();
  out->type = type;
  out->length = rows;
  QUIVER_ASSIGN_OR_RETURN(auto validity, Buffer::AllocateZeroed(pool, (rows + 7) / 8));
  uint8_t* valid = validity->mutable_data();
  std::string scratch;
  int64_t nulls = 0;
  auto bad = [&](int64_t r, std::string_view s) {
    return Status::Invalid(CsvWhere(source, lines[r]) + ", " + ColumnLabel(schema, c) + ": '" + std::string(s) +
                           "' is not a " + type->ToString());
  };
  if (is_string) {
    int64_t bytes = 0;
    for (int64_t r = 0; r < rows; ++r) bytes += fields[r * ncols + c].end - fields[r * ncols + c].begin;
    if (bytes > INT32_MAX) {
      return Status::Invalid(CsvWhere(source, lines[0]) + ", " + ColumnLabel(schema, c) +
                             ": more than 2 GiB of text in one batch (lower batch_rows)");
    }
    QUIVER_ASSIGN_OR_RETURN(auto offsets, Buffer::Allocate(pool, (rows + 1) * 4));
    QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::Allocate(pool, std::max<int64_t>(bytes, 1)));
    auto* off = reinterpret_cast<int32_t*>(offsets->mutable_data());
    uint8_t* d = data->mutable_data();
    int32_t at = 0;
    off[0] = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const FieldRef& f = fields[r * ncols + c];
      std::string_view s = FieldText(text, f, quote, &scratch);
      if (IsNull(s, f, o, true)) {
        ++nulls;
      } else {
        bit_util::SetBit(valid, r);
        std::memcpy(d + at, s.data(), s.size());
        at += static_cast<int32_t>(s.size());
      }
      off[r + 1] = at;
    }
    out->buffers = {validity, offsets, data};
  } else if (type->id == TypeId::kBool) {
    QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::AllocateZeroed(pool, (rows + 7) / 8));
    for (int64_t r = 0; r < rows; ++r) {
      const FieldRef& f = fields[r * ncols + c];
      std::string_view s = FieldText(text, f, quote, &scratch);
      if (IsNull(s, f, o, false)) {
        ++nulls;
        continue;
      }
      bool v = false;
      if (!ParseCsvBool(s, &v)) return bad(r, s);
      bit_util::SetBit(valid, r);
      if (v) bit_util::SetBit(data->mutable_data(), r);
    }
    out->buffers = {validity, data};
  } else {
    const int width = type->id == TypeId::kDate32 ? 4 : type->id == TypeId::kDecimal ? 16 : 8;
    QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::AllocateZeroed(pool, std::max<int64_t>(rows * width, 1)));
    uint8_t* d = data->mutable_data();
    for (int64_t r = 0; r < rows; ++r) {
      const FieldRef& f = fields[r * ncols + c];
      std::string_view s = FieldText(text, f, quote, &scratch);
      if (IsNull(s, f, o, false)) {
        ++nulls;
        continue;
      }
      bool ok = false;
      switch (type->id) {
        case TypeId::kInt64: ok = ParseCsvInt64(s, reinterpret_cast<int64_t*>(d) + r); break;
        case TypeId::kFloat64: ok = ParseCsvDouble(s, reinterpret_cast<double*>(d) + r); break;
        case TypeId::kDate32: ok = ParseCsvDate(s, reinterpret_cast<int32_t*>(d) + r); break;
        case TypeId::kTimestamp: {
          int32_t days = 0;
          ok = ParseCsvTimestamp(s, reinterpret_cast<int64_t*>(d) + r);
          // A bare date in a timestamp column is its midnight.
          if (!ok && ParseCsvDate(s, &days)) {
            reinterpret_cast<int64_t*>(d)[r] = int64_t{days} * 86'400'000'000LL;
            ok = true;
          }
          break;
        }
        default: {
          if (type->id != TypeId::kDecimal)
            return Status::NotImplemented(ColumnLabel(schema, c) + ": CSV type " + type->ToString());
          __int128 v = 0;
          ok = ParseCsvDecimal(s, type->precision, type->scale, &v);
          if (ok) std::memcpy(d + r * 16, &v, sizeof(v));
          break;
        }
      }
      if (!ok) return bad(r, s);
      bit_util::SetBit(valid, r);
    }
    out->buffers = {validity, data};
  }
  out->null_count = nulls;
  if (nulls == 0) out->buffers[0] = nullptr;
  return ArrayDataPtr(std::move(out));
}

bool SupportedType(const DataType& t) {
  switch (t.id) {
    case TypeId::kBool:
    case TypeId::kInt64:
    case TypeId::kFloat64:
    case TypeId::kDate32:
    case TypeId::kUtf8: return true;
    case TypeId::kTimestamp: return t.unit == TimeUnit::kMicro;
    default:
      return t.id == TypeId::kDecimal && t.bit_width == 128 && t.precision >= 1 && t.precision <= 38 && t.scale >= 0 &&
             t.scale <= t.precision;
  }
}

// `s` without leading and trailing spaces.
std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// The options' column_types applied to `table`'s schema. Errors: an
// override naming no column or using an unsupported type.
Result<CsvLayout> ApplyColumnTypes(CsvLayout table, const CsvOptions& o, std::string_view source) {
  auto schema = std::make_shared<Schema>(*table.schema);
  if (o.column_types_by_position.size() > schema->fields.size()) {
    return Status::Invalid(std::string(source) + ": " + std::to_string(o.column_types_by_position.size()) +
                           " column types given for " + std::to_string(schema->fields.size()) + " columns");
  }
  for (size_t i = 0; i < o.column_types_by_position.size(); ++i) {
    const DataTypePtr& type = o.column_types_by_position[i];
    const std::string& name = schema->fields[i]->name;
    if (!type || !SupportedType(*type)) {
      return Status::Invalid(std::string(source) + ": column '" + name + "': unsupported CSV type " +
                             (type ? type->ToString() : std::string("null")));
    }
    schema->fields[i] = field(name, type);
  }
  for (const auto& [name, type] : o.column_types) {
    const int idx = schema->FieldIndex(name);
    if (idx < 0) return Status::Invalid(std::string(source) + ": column type override names no column '" + name + "'");
    if (!type || !SupportedType(*type)) {
      return Status::Invalid(std::string(source) + ": column '" + name + "': unsupported CSV type " +
                             (type ? type->ToString() : std::string("null")));
    }
    schema->fields[idx] = field(name, type);
  }
  table.schema = schema;
  return table;
}

// The layout of a text of blank lines only (dialect, header and offsets
// set by the caller): one utf8 column "column0" (its rows, one per blank
// line after data_offset, read as NULLs: a one-column table reads blank
// lines as rows).
Result<CsvLayout> BlankTextLayout(CsvLayout table, const CsvOptions& o, std::string_view source) {
  auto schema = std::make_shared<Schema>();
  schema->fields.push_back(field("column0", utf8()));
  table.schema = std::move(schema);
  return ApplyColumnTypes(std::move(table), o, source);
}

}  // namespace

Result<DataTypePtr> CsvTypeFromName(std::string_view name) {
  std::string n(name);
  for (char& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (n == "int64" || n == "bigint" || n == "integer" || n == "int") return int64();
  if (n == "double" || n == "float64" || n == "float8") return float64();
  if (n == "bool" || n == "boolean") return boolean();
  if (n == "date" || n == "date32") return date32();
  if (n == "timestamp" || n == "timestamp[us]") return timestamp(TimeUnit::kMicro);
  if (n == "varchar" || n == "utf8" || n == "string" || n == "text") return utf8();
  // DECIMAL / NUMERIC [(p[, s])]: DuckDB's default is (18, 3).
  for (std::string_view kw : {"decimal", "numeric"}) {
    if (n.rfind(kw, 0) != 0) continue;
    std::string_view rest = std::string_view(n).substr(kw.size());
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    int p = 18, sc = 3;
    if (!rest.empty()) {
      int parsed_p = 0, parsed_s = 0;
      char close = 0;
      const std::string r(rest);
      const int got = std::sscanf(r.c_str(), "(%d , %d %c", &parsed_p, &parsed_s, &close);
      if (got == 3 && close == ')') {
        p = parsed_p;
        sc = parsed_s;
      } else if (std::sscanf(r.c_str(), "(%d %c", &parsed_p, &close) == 2 && close == ')') {
        p = parsed_p;
        sc = 0;
      } else {
        break;
      }
    }
    if (p < 1 || p > 38 || sc < 0 || sc > p) {
      return Status::Invalid("CSV column type '" + std::string(name) + "': precision 1..38 and scale 0..precision");
    }
    return decimal(128, p, sc);
  }
  return Status::Invalid("CSV column type '" + std::string(name) +
                         "' is not one of int64, double, boolean, date, timestamp, varchar, decimal(p, s)");
}

Result<CsvLayout> InferCsvLayout(std::string_view text, bool at_end, const CsvOptions& o, std::string_view source) {
  if (o.sample_rows < 1) return Status::Invalid("CSV sample_rows must be >= 1");
  if (o.batch_rows < 1 || o.batch_rows > (int64_t{1} << 24)) return Status::Invalid("CSV batch_rows must be 1..2^24");
  for (char ch : {o.delimiter, o.quote}) {
    if (ch == '\n' || ch == '\r') return Status::Invalid("CSV delimiter and quote cannot be line ends");
  }
  int64_t bom = 0;
  if (text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0) {
    text.remove_prefix(3);
    bom = 3;
  }
  CsvLayout table;
  std::tie(table.delimiter, table.quote) = SniffDialect(text, at_end, o, source);
  if (table.delimiter == table.quote) return Status::Invalid("CSV delimiter and quote are the same character");
  const char quote = table.quote;

  // Sample: the first row and up to sample_rows rows after it.
  Tokenizer sampler(text, table.delimiter, quote, source, 1, at_end);
  std::vector<FieldRef> first;
  int64_t line = 0;
  QUIVER_ASSIGN_OR_RETURN(RowStatus any, sampler.NextRow(&first, &line));
  if (any == RowStatus::kNeedMore) {
    return Status::Invalid(std::string(source) + ": the first row does not end in the first " +
                           std::to_string(text.size()) + " bytes");
  }
  table.data_offset = bom;
  if (any == RowStatus::kEnd && text.empty()) {
    // No line at all (0 bytes, or a byte order mark only): one text column
    // of no rows, the table DuckDB's read_csv gives.
    auto schema = std::make_shared<Schema>();
    schema->fields.push_back(field("column0", utf8()));
    table.schema = std::move(schema);
    table.empty_text = true;
    table.header = false;
    return table;
  }
  if (any == RowStatus::kEnd) {
    // Blank lines only: one text column "column0" whose rows are the blank
    // lines (NULLs), the first of them the header unless the options say
    // there is none, as DuckDB's read_csv reads "\n\n\n" (two NULL rows; three
    // with header => false).
    table.header = o.header != HeaderMode::kAbsent;
    if (table.header) {
      const int64_t first_end = text.size() >= 2 && text[0] == '\r' && text[1] == '\n' ? 2 : 1;
      table.data_offset = bom + first_end;
      table.data_line = 2;
    }
    table.row_bytes = 1;
    return BlankTextLayout(std::move(table), o, source);
  }
  const int64_t after_first = sampler.pos();
  const int64_t after_first_line = sampler.line();
  const size_t ncols = first.size();
  // Blank lines before the first row are skipped; after it, in a table of
  // one column, each is a NULL row (DuckDB's read_csv reads them so).
  sampler.set_blank_lines_are_rows(ncols == 1);
  sampler.set_max_stored_fields(ncols);  // a longer row is counted, not stored
  std::vector<unsigned> kinds(ncols, kAllKinds);
  std::vector<bool> seen(ncols, false);
  std::string scratch;
  std::vector<FieldRef> row;
  int64_t sampled = 0;
  for (int64_t r = 0; r < o.sample_rows; ++r) {
    row.clear();
    QUIVER_ASSIGN_OR_RETURN(RowStatus more, sampler.NextRow(&row, &line));
    if (more != RowStatus::kRow) break;
    if (sampler.row_fields() != ncols) {
      return Status::Invalid(CsvWhere(source, line) + ": expected " + std::to_string(ncols) + " fields, found " +
                             std::to_string(sampler.row_fields()));
    }
    ++sampled;
    for (size_t c = 0; c < ncols; ++c) {
      std::string_view s = FieldText(text, row[c], quote, &scratch);
      if (IsNull(s, row[c], o, false)) continue;
      seen[c] = true;
      kinds[c] &= KindsOf(s);
    }
  }
  if (sampled > 0) table.row_bytes = static_cast<double>(sampler.pos() - after_first) / static_cast<double>(sampled);
  std::vector<DataTypePtr> types(ncols);
  for (size_t c = 0; c < ncols; ++c) types[c] = TypeOfKinds(kinds[c], seen[c]);

  // Header: a first row one of whose values does not fit its column's type;
  // for all-text columns, distinct non-empty values.
  bool header = o.header == HeaderMode::kPresent;
  if (o.header == HeaderMode::kAuto) {
    bool typed = false, misfit = false, distinct = true;
    std::set<std::string> names;
    for (size_t c = 0; c < ncols; ++c) {
      std::string_view s = FieldText(text, first[c], quote, &scratch);
      if (s.empty()) distinct = false;
      if (!names.insert(std::string(s)).second) distinct = false;
      if (types[c]->id == TypeId::kUtf8) continue;
      typed = true;
      if (!IsNull(s, first[c], o, false) && !(KindsOf(s) & kinds[c])) misfit = true;
    }
    header = typed ? misfit : distinct;
    if (sampled == 0) {
      // One row only: a header when every value is a non-empty text that
      // no other type reads ("a,b,c"; "1,2,3" and "x," are a data row),
      // as DuckDB's read_csv decides.
      header = true;
      for (size_t c = 0; c < ncols; ++c) {
        std::string_view s = FieldText(text, first[c], quote, &scratch);
        if (IsNull(s, first[c], o, false) || KindsOf(s) != 0) header = false;
      }
    }
  }
  table.header = header;
  if (header) {
    table.data_offset = bom + after_first;
    table.data_line = after_first_line;
  } else {
    if (sampled == 0) table.row_bytes = static_cast<double>(after_first);
    // The first row is data: its values narrow the types too.
    for (size_t c = 0; c < ncols; ++c) {
      std::string_view s = FieldText(text, first[c], quote, &scratch);
      if (IsNull(s, first[c], o, false)) continue;
      seen[c] = true;
      kinds[c] &= KindsOf(s);
      types[c] = TypeOfKinds(kinds[c], seen[c]);
    }
  }

  // Names: the header's (empty -> columnN, duplicates suffixed _1, _2...).
  auto schema = std::make_shared<Schema>();
  std::set<std::string> used;
  for (size_t c = 0; c < ncols; ++c) {
    // Header names are trimmed of spaces (quoted or not; tabs are kept), as
    // DuckDB's read_csv trims them (" x " is x; a name of spaces only is columnN).
    std::string name = header ? std::string(TrimSpaces(FieldText(text, first[c], quote, &scratch))) : std::string();
    if (name.empty()) name = "column" + std::to_string(c);
    std::string unique = name;
    for (int k = 1; used.count(unique); ++k) unique = name + "_" + std::to_string(k);
    used.insert(unique);
    schema->fields.push_back(field(unique, types[c]));
  }
  table.schema = schema;
  return ApplyColumnTypes(std::move(table), o, source);
}

CsvRowConverter::CsvRowConverter(CsvLayout layout, CsvOptions options, std::optional<std::vector<int>> columns)
    : layout_(std::move(layout)), options_(std::move(options)) {
  if (columns) {
    columns_ = std::move(*columns);
  } else if (layout_.schema) {
    for (int c = 0; c < layout_.schema->num_fields(); ++c) columns_.push_back(c);
  }
}

Result<CsvRowConverter::Chunk> CsvRowConverter::Convert(std::string_view text, int64_t first_line, bool at_end,
                                                        MemoryPool* pool, std::string_view source,
                                                        CsvRowScratch* scratch) const {
  Chunk out;
  const Schema& schema = *layout_.schema;
  const size_t ncols = schema.fields.size();
  Tokenizer tok(text, layout_.delimiter, layout_.quote, source, first_line, at_end);
  tok.set_blank_lines_are_rows(ncols == 1);
  tok.set_max_stored_fields(ncols);  // a wider row is counted (an error), never stored
  // Field positions: the caller's scratch, reused between calls (fresh
  // arrays of a range's fields, several MiB, cost a page fault per 4 KiB
  // each time: most of a scan's system time on the 2-core machines).
  std::optional<CsvRowScratch> own;
  if (scratch == nullptr) scratch = &own.emplace(pool);
  PoolArray<FieldRef>& fields = scratch->fields;
  PoolArray<int64_t>& lines = scratch->lines;
  int64_t line = 0;
  bool done = false;
  while (!done) {
    fields.clear();
    lines.clear();
    while (static_cast<int64_t>(lines.size()) < options_.batch_rows) {
      QUIVER_ASSIGN_OR_RETURN(RowStatus more, tok.NextRow(&fields, &line));
      if (more != RowStatus::kRow) {
        done = true;
        break;
      }
      if (tok.row_fields() != ncols) {
        return Status::Invalid(CsvWhere(source, line) + ": expected " + std::to_string(ncols) + " fields, found " +
                               std::to_string(tok.row_fields()));
      }
      QUIVER_RETURN_NOT_OK(lines.push_back(line));
    }
    if (lines.empty()) break;
    auto batch = std::make_shared<RecordBatch>();
    batch->schema = layout_.schema;
    batch->num_rows = static_cast<int64_t>(lines.size());
    batch->columns.resize(ncols);
    for (int c : columns_) {
      QUIVER_ASSIGN_OR_RETURN(
          batch->columns[static_cast<size_t>(c)],
          BuildColumn(text, fields.data(), std::span<const int64_t>(lines.data(), lines.size()), ncols,
                      static_cast<size_t>(c), schema, options_, layout_.quote, pool, source));
    }
    out.rows += batch->num_rows;
    out.batches.push_back(std::move(batch));
  }
  out.consumed_bytes = tok.pos();
  out.end_line = tok.line();
  return out;
}

Result<RecordBatchPtr> CsvRowConverter::EmptyBatch(MemoryPool* pool) const {
  const Schema& schema = *layout_.schema;
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = layout_.schema;
  batch->columns.resize(schema.fields.size());
  for (int c : columns_) {
    QUIVER_ASSIGN_OR_RETURN(batch->columns[static_cast<size_t>(c)],
                            BuildColumn({}, nullptr, {}, schema.fields.size(), static_cast<size_t>(c), schema, options_,
                                        layout_.quote, pool, ""));
  }
  return RecordBatchPtr(std::move(batch));
}

Result<CsvTable> ParseCsv(std::string_view text, const CsvOptions& o, MemoryPool* pool, std::string_view source) {
  QUIVER_ASSIGN_OR_RETURN(CsvLayout layout, InferCsvLayout(text, true, o, source));
  CsvTable table;
  table.schema = layout.schema;
  table.delimiter = layout.delimiter;
  table.quote = layout.quote;
  table.header = layout.header;
  if (layout.empty_text) return table;
  CsvRowConverter converter(layout, o);
  QUIVER_ASSIGN_OR_RETURN(auto chunk, converter.Convert(text.substr(static_cast<size_t>(layout.data_offset)),
                                                        layout.data_line, true, pool, source));
  table.num_rows = chunk.rows;
  table.batches = std::move(chunk.batches);
  return table;
}

}  // namespace quiver::formats::csv
