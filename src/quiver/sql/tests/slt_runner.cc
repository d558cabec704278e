// quiver/sql/tests/slt_runner.cc — see slt_runner.h.
#include "quiver/sql/tests/slt_runner.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "quiver/sql/engine.h"
#include "quiver/sql/expression/temporal.h"
#include "quiver/sql/expression/vector.h"

namespace quiver::sql::testing {

namespace {

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p < line.size()) {
    while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
    size_t q = p;
    while (q < line.size() && line[q] != ' ' && line[q] != '\t') ++q;
    if (q > p) out.push_back(line.substr(p, q - p));
    p = q;
  }
  return out;
}

bool Blank(const std::string& line) { return line.find_first_not_of(" \t") == std::string::npos; }

std::string Format3(double d) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3f", d);
  std::string s = buf;
  if (s == "-0.000") s = "0.000";
  return s;
}

// One value as sqllogictest prints it for column type letter `type`.
std::string Render(const Vec& v, int64_t row, char type) {
  if (v.IsNull(row)) return "NULL";
  const Value x = ValueAt(v, row);
  const TypeClass c = ClassOf(*x.type);
  std::string text;
  switch (c) {
    case TypeClass::kBool: text = x.i ? "true" : "false"; break;
    case TypeClass::kInt:
      text = type == 'R' ? Format3(static_cast<double>(x.i)) : std::to_string(static_cast<int64_t>(x.i));
      break;
    case TypeClass::kDecimal: {
      const int scale = ScaleOf(*x.type);
      if (type == 'I') {
        const i128 q = x.i / Pow10(scale);  // toward zero
        text = Value::Decimal(q, 38, 0).ToString();
      } else if (type == 'R') {
        text = Format3(DecimalToDouble(x.i, scale));
      } else {
        text = x.ToString();
      }
      break;
    }
    case TypeClass::kFloat:
      if (type == 'I') {
        text = std::isfinite(x.f) ? std::to_string(static_cast<int64_t>(std::trunc(x.f))) : "NULL";
      } else if (type == 'R') {
        text = Format3(x.f);
      } else {
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%.17g", x.f);
        for (int prec = 1; prec <= 17; ++prec) {
          std::snprintf(buf, sizeof(buf), "%.*g", prec, x.f);
          if (std::strtod(buf, nullptr) == x.f) break;
        }
        text = buf;
      }
      break;
    case TypeClass::kString: text = x.s; break;
    case TypeClass::kDate: text = FormatDate(static_cast<int32_t>(x.i)); break;
    case TypeClass::kTimestamp: text = FormatTimestamp(static_cast<int64_t>(x.i)); break;
    default: text = "?"; break;
  }
  if (text.empty()) return "(empty)";
  for (auto& ch : text)
    if (ch < ' ' || ch > '~') ch = '@';
  return text;
}

struct Runner {
  std::string file;
  SltOptions options;
  SltReport report;
  std::shared_ptr<MemoryPool> pool = MemoryPool::MakeRoot({"slt"});
  std::shared_ptr<Catalog> catalog = std::make_shared<Catalog>();
  Engine engine = Engine::WithWritableCatalog(catalog, pool->MakeChild({"slt-tables"}));
  std::map<std::string, std::string> labels;  // label -> hash of its values
  SqlDialect dialect = SqlDialect::kPostgres;

  void Fail(int line, const std::string& sql, const std::string& what) {
    report.failures.push_back(file + ":" + std::to_string(line) + ": " + sql + "\n  " + what);
  }

  // Runs `sql`; rows of rendered values, or the error.
  Result<std::vector<std::vector<std::string>>> Run(const std::string& sql, const std::string& types) {
    ExecuteOptions o;
    o.pool = pool.get();
    o.threads = options.threads;
    o.dialect = dialect;  // SET dialect = ... changes it for the file's later records
    o.set_dialect = [this](SqlDialect d) { dialect = d; };
    QUIVER_ASSIGN_OR_RETURN(auto stream, engine.Execute(sql, o));
    std::vector<std::vector<std::string>> rows;
    while (true) {
      QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, stream->Next());
      if (!b) break;
      for (int64_t r = 0; r < b->num_rows; ++r) {
        std::vector<std::string> row;
        for (size_t c = 0; c < b->columns.size(); ++c) {
          Vec v;
          QUIVER_ASSIGN_OR_RETURN(v.array, Canonicalize(b->columns[c], pool.get()));
          row.push_back(Render(v, r, c < types.size() ? types[c] : 'T'));
        }
        rows.push_back(std::move(row));
      }
    }
    return rows;
  }

  void Statement(int line, const std::vector<std::string>& header, const std::string& sql) {
    ++report.statements;
    const bool want_error = header.size() > 1 && header[1] == "error";
    if (header.size() < 2 || (header[1] != "ok" && !want_error)) {
      Fail(line, sql, "malformed statement record (want `statement ok` or `statement error`)");
      return;
    }
    std::string error_text;
    for (size_t k = 2; k < header.size(); ++k) error_text += (k > 2 ? " " : "") + header[k];
    auto r = Run(sql, "");
    if (want_error) {
      // The message, then its SQLSTATE in brackets ("... [0A000]").
      const std::string got = r.ok() ? "" : r.status().ToString() + " [" + r.status().sql_state() + "]";
      if (r.ok()) {
        Fail(line, sql, "expected an error, got success");
      } else if (!error_text.empty() && got.find(error_text) == std::string::npos) {
        Fail(line, sql, "expected an error containing '" + error_text + "', got: " + got);
      }
    } else if (!r.ok()) {
      Fail(line, sql, "expected success, got: " + r.status().ToString());
    }
  }

  void Query(int line, const std::vector<std::string>& header, const std::string& sql,
             const std::vector<std::string>& expected_lines) {
    ++report.queries;
    if (header.size() < 2) {
      Fail(line, sql, "malformed query record (want `query <types> [sort] [label]`)");
      return;
    }
    const std::string types = header[1];
    std::string sort = "nosort", label;
    if (header.size() > 2) sort = header[2];
    if (header.size() > 3) label = header[3];
    if (sort != "nosort" && sort != "rowsort" && sort != "valuesort") {
      Fail(line, sql, "unknown sort mode '" + sort + "'");
      return;
    }
    auto r = Run(sql, types);
    if (!r.ok()) {
      Fail(line, sql, "query failed: " + r.status().ToString());
      return;
    }
    auto rows = std::move(*r);
    for (const auto& row : rows)
      if (row.size() != types.size()) {
        Fail(line, sql,
             "the query gives " + std::to_string(row.size()) + " columns, its types '" + types + "' name " +
                 std::to_string(types.size()));
        return;
      }
    if (sort == "rowsort") std::sort(rows.begin(), rows.end());
    std::vector<std::string> values;
    for (const auto& row : rows) values.insert(values.end(), row.begin(), row.end());
    if (sort == "valuesort") std::sort(values.begin(), values.end());
    std::string all;
    for (const auto& v : values) all += v + "\n";
    const std::string hash = Md5Hex(all);
    if (!label.empty()) {
      auto [it, inserted] = labels.emplace(label, hash);
      if (!inserted && it->second != hash) Fail(line, sql, "values differ from the earlier query labelled " + label);
    }
    if (expected_lines.size() == 1) {
      const auto w = Words(expected_lines[0]);
      if (w.size() == 5 && w[1] == "values" && w[2] == "hashing" && w[3] == "to") {
        const std::string got = std::to_string(values.size()) + " values hashing to " + hash;
        if (w[0] != std::to_string(values.size()) || w[4] != hash)
          Fail(line, sql, "expected " + expected_lines[0] + ", got " + got);
        return;
      }
    }
    std::vector<std::string> expected;
    for (const auto& l : expected_lines) {
      size_t start = 0;
      while (true) {
        const size_t tab = l.find('\t', start);
        expected.push_back(l.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
        if (tab == std::string::npos) break;
        start = tab + 1;
      }
    }
    if (sort == "valuesort") std::sort(expected.begin(), expected.end());
    if (expected != values) {
      std::string got, want;
      for (size_t k = 0; k < values.size() && k < 40; ++k) got += (k ? " " : "") + values[k];
      for (size_t k = 0; k < expected.size() && k < 40; ++k) want += (k ? " " : "") + expected[k];
      Fail(line, sql,
           "expected " + std::to_string(expected.size()) + " values [" + want + "], got " +
               std::to_string(values.size()) + " [" + got + "]");
    }
  }

  void RunAll(std::string_view text) {
    const auto lines = SplitLines(text);
    size_t i = 0;
    bool skip = false;
    while (i < lines.size()) {
      if (static_cast<int>(report.failures.size()) >= options.max_failures) return;
      const std::string& line = lines[i];
      if (Blank(line) || line[0] == '#') {
        ++i;
        continue;
      }
      const auto w = Words(line);
      const int line_no = static_cast<int>(i) + 1;
      if (w[0] == "halt") return;
      if (w[0] == "hash-threshold") {
        ++i;
        continue;
      }
      if (w[0] == "skipif" || w[0] == "onlyif") {
        const bool us = w.size() > 1 && w[1] == "quiver";
        if ((w[0] == "skipif") == us) skip = true;
        ++i;
        continue;
      }
      if (w[0] != "statement" && w[0] != "query") {
        Fail(line_no, line, "unknown record type '" + w[0] + "'");
        // Skip the record.
        while (i < lines.size() && !Blank(lines[i])) ++i;
        continue;
      }
      ++i;
      std::string sql;
      std::vector<std::string> expected;
      bool in_expected = false;
      while (i < lines.size() && !Blank(lines[i])) {
        if (w[0] == "query" && lines[i] == "----") {
          in_expected = true;
        } else if (in_expected) {
          expected.push_back(lines[i]);
        } else if (lines[i][0] != '#') {
          sql += (sql.empty() ? "" : "\n") + lines[i];
        }
        ++i;
      }
      if (skip) {
        ++report.skipped;
        skip = false;
        continue;
      }
      ++report.records;
      if (w[0] == "statement")
        Statement(line_no, w, sql);
      else
        Query(line_no, w, sql, expected);
    }
  }
};

}  // namespace

std::string Md5Hex(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), digest, &len, EVP_md5(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int k = 0; k < len; ++k) {
    out.push_back(kHex[digest[k] >> 4]);
    out.push_back(kHex[digest[k] & 15]);
  }
  return out;
}

SltReport RunSltScript(std::string_view text, const std::string& file, const SltOptions& options) {
  Runner r;
  r.file = file;
  r.options = options;
  r.RunAll(text);
  return std::move(r.report);
}

}  // namespace quiver::sql::testing
