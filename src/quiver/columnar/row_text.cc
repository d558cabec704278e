// quiver/columnar/row_text.cc — see row_text.h.
#include "quiver/columnar/row_text.h"

#include <algorithm>
#include <map>
#include <set>

#include "quiver/columnar/value_format.h"

namespace quiver {

namespace {

constexpr int64_t kTableBlockRows = 1000;
constexpr size_t kTableMaxCellBytes = 60;

// `s`, then spaces up to `width` bytes.
void AppendPadded(const std::string& s, size_t width, std::string* out) {
  out->append(s);
  if (width > s.size()) out->append(width - s.size(), ' ');
}

}  // namespace

Result<RowTextFormat> ParseRowTextFormat(std::string_view name) {
  if (name == "table") return RowTextFormat::kTable;
  if (name == "pipe") return RowTextFormat::kPipe;
  if (name == "csv") return RowTextFormat::kCsv;
  if (name == "jsonl") return RowTextFormat::kJsonl;
  if (name == "none") return RowTextFormat::kNone;
  return Status::Invalid("unknown row text format '" + std::string(name) + "'");
}

std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::vector<std::string> UniqueJsonKeys(const Schema& schema) {
  std::set<std::string> taken;
  for (const auto& f : schema.fields) taken.insert(f->name);
  std::map<std::string, int> seen;
  std::vector<std::string> keys;
  keys.reserve(schema.fields.size());
  for (const auto& f : schema.fields) {
    int& n = seen[f->name];
    if (++n == 1) {
      keys.push_back(f->name);
      continue;
    }
    std::string key;
    do {
      key = f->name + "_" + std::to_string(n);
    } while (!taken.insert(key).second && ++n);
    keys.push_back(key);
  }
  return keys;
}

void RowTextWriter::Put(const std::string& text) { std::fwrite(text.data(), 1, text.size(), out_); }

void RowTextWriter::WriteHeader(const Schema& schema) {
  if (format_ != RowTextFormat::kCsv && format_ != RowTextFormat::kPipe) return;
  const bool csv = format_ == RowTextFormat::kCsv;
  std::string line;
  for (size_t c = 0; c < schema.fields.size(); ++c) {
    if (c) line += csv ? "," : " | ";
    line += csv ? CsvField(schema.fields[c]->name) : schema.fields[c]->name;
  }
  line += '\n';
  Put(line);
}

void RowTextWriter::WriteRows(const RecordBatch& batch, int64_t begin, int64_t end) {
  switch (format_) {
    case RowTextFormat::kNone: return;
    case RowTextFormat::kTable:
      for (int64_t b = begin; b < end; b += kTableBlockRows) {
        WriteTableBlock(batch, b, std::min(end, b + kTableBlockRows));
      }
      return;
    case RowTextFormat::kJsonl: {
      const std::vector<std::string> keys = UniqueJsonKeys(*batch.schema);
      std::string line;
      for (int64_t r = begin; r < end; ++r) {
        line.clear();
        line += '{';
        for (size_t c = 0; c < batch.columns.size(); ++c) {
          if (c) line += ',';
          AppendJsonString(keys[c], &line);
          line += ':';
          FormatValue(*batch.columns[c], r, ValueFormat::kJson, &line);
        }
        line += "}\n";
        Put(line);
      }
      return;
    }
    case RowTextFormat::kCsv:
    case RowTextFormat::kPipe: {
      const bool csv = format_ == RowTextFormat::kCsv;
      std::string line, cell;
      for (int64_t r = begin; r < end; ++r) {
        line.clear();
        for (size_t c = 0; c < batch.columns.size(); ++c) {
          const ArrayData& a = *batch.columns[c];
          if (c) line += csv ? "," : " | ";
          if (IsLogicalNull(a, r)) {
            if (!csv) line += "NULL";
            continue;
          }
          cell.clear();
          FormatValue(a, r, ValueFormat::kText, &cell);
          if (csv) {
            line += CsvField(cell);
          } else {
            line += cell;
          }
        }
        line += '\n';
        Put(line);
      }
      return;
    }
  }
}

void RowTextWriter::WriteTableBlock(const RecordBatch& batch, int64_t begin, int64_t end) {
  const auto& fields = batch.schema->fields;
  std::vector<size_t> widths(fields.size());
  for (size_t c = 0; c < fields.size(); ++c) widths[c] = fields[c]->name.size();
  std::vector<std::vector<std::string>> cells(static_cast<size_t>(end - begin));
  for (int64_t r = begin; r < end; ++r) {
    auto& row = cells[static_cast<size_t>(r - begin)];
    row.reserve(fields.size());
    for (size_t c = 0; c < fields.size(); ++c) {
      std::string v;
      FormatValue(*batch.columns[c], r, ValueFormat::kText, &v);
      if (v.size() > kTableMaxCellBytes) {
        v.resize(kTableMaxCellBytes - 3);
        v += "...";
      }
      widths[c] = std::max(widths[c], v.size());
      row.push_back(std::move(v));
    }
  }
  std::string line;
  for (size_t c = 0; c < fields.size(); ++c) {
    if (c) line += " | ";
    AppendPadded(fields[c]->name, widths[c], &line);
  }
  line += "\n";
  for (size_t c = 0; c < fields.size(); ++c) {
    if (c) line += "-+-";
    line.append(widths[c], '-');
  }
  line += "\n";
  Put(line);
  for (const auto& row : cells) {
    line.clear();
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) line += " | ";
      AppendPadded(row[c], widths[c], &line);
    }
    line += "\n";
    Put(line);
  }
}

}  // namespace quiver
