// quiver/sql/binder/bind_file_table.cc — FROM items that name files
// (sql/file_tables.h): a quoted path, read_parquet(...), read_csv(...),
// with DuckDB's named parameters (`name => value` or `name = value`).
#include <algorithm>
#include <cctype>

#include "quiver/formats/csv/csv_reader.h"
#include "quiver/sql/binder/binder_internal.h"

namespace quiver::sql {

namespace {

// The table name DuckDB gives a file: its name up to the first '.'.
std::string StemOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string file = slash == std::string::npos ? path : path.substr(slash + 1);
  file = file.substr(0, file.find('.'));
  std::string out;
  for (char c : file) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return FoldIdentifier(out.empty() ? "file" : out);
}

void SplitAnd(const Json& node, std::vector<const Json*>* out) {
  if (node.contains("BoolExpr") && node["BoolExpr"].value("boolop", "") == "AND_EXPR") {
    for (const auto& a : node["BoolExpr"]["args"]) SplitAnd(a, out);
  } else {
    out->push_back(&node);
  }
}

// The column a ColumnRef names when it is `col` or `alias.col`; else "".
std::string RefColumn(const Json& node, const std::string& alias) {
  if (!node.contains("ColumnRef")) return {};
  const Json& f = node["ColumnRef"]["fields"];
  if (f.size() == 1) return FoldIdentifier(StringOf(f[0]));
  if (f.size() == 2 && FoldIdentifier(StringOf(f[0])) == alias) return FoldIdentifier(StringOf(f[1]));
  return {};
}

// The text of a constant a partition folder could hold: a string, or a
// positive integer (libpg_query's JSON drops zero and negatives: no
// pruning on those).
bool ConstText(const Json& node, std::string* out) {
  if (!node.contains("A_Const")) return false;
  const Json& c = node["A_Const"];
  if (c.contains("sval")) {
    *out = c["sval"].value("sval", "");
    return true;
  }
  if (c.contains("ival") && c["ival"].contains("ival")) {
    *out = std::to_string(c["ival"]["ival"].get<int64_t>());
    return true;
  }
  return false;
}

// `col = const`, `const = col` and `col IN (consts)` terms of `where` over
// columns of the item `alias`: column -> the values that can match.
std::map<std::string, std::vector<std::string>> PartitionFilters(const Json* where, const std::string& alias) {
  std::map<std::string, std::vector<std::string>> out;
  if (where == nullptr) return out;
  std::vector<const Json*> terms;
  SplitAnd(*where, &terms);
  for (const Json* t : terms) {
    if (!t->contains("A_Expr")) continue;
    const Json& a = (*t)["A_Expr"];
    const std::string kind = a.value("kind", "");
    const std::string op = a.contains("name") && !a["name"].empty() ? StringOf(a["name"].back()) : "";
    if (!a.contains("lexpr") || !a.contains("rexpr") || op != "=") continue;
    std::string value;
    if (kind == "AEXPR_OP") {
      std::string col = RefColumn(a["lexpr"], alias);
      bool ok = !col.empty() && ConstText(a["rexpr"], &value);
      if (!ok) {
        col = RefColumn(a["rexpr"], alias);
        ok = !col.empty() && ConstText(a["lexpr"], &value);
      }
      if (!ok) continue;
      auto it = out.find(col);
      if (it == out.end()) {
        out[col] = {value};
      } else {
        // Several terms on one column: only the values all of them allow.
        const bool allowed = std::find(it->second.begin(), it->second.end(), value) != it->second.end();
        it->second = allowed ? std::vector<std::string>{value} : std::vector<std::string>{};
      }
    } else if (kind == "AEXPR_IN") {
      const std::string col = RefColumn(a["lexpr"], alias);
      if (col.empty() || out.count(col) || !a["rexpr"].contains("List")) continue;
      std::vector<std::string> values;
      bool all = true;
      for (const auto& item : a["rexpr"]["List"]["items"]) {
        all = all && ConstText(item, &value);
        values.push_back(value);
      }
      if (all) out[col] = std::move(values);
    }
  }
  return out;
}

}  // namespace

Result<TableInfo> Binder::Impl::LoadFiles(const std::vector<std::string>& paths, const FileTableOptions& options,
                                          int location) {
  if (!file_tables_allowed) {
    return Status::Invalid("reading files from SQL ('" + paths[0] +
                           "') is turned off here (quiver serve: --allow-file-tables) (" + Where(location) + ")")
        .WithSqlState("42501");
  }
  if (file_pool == nullptr) return Status::Invalid("file tables: no pool to read into");
  FileTableOptions with_store = options;
  with_store.s3 = s3_files;
  auto info = LoadFileTable(StemOf(paths[0]), paths, with_store, file_pool);
  if (!info.ok()) return WithPosition(info.status(), location);
  if (path_tables && info->file_source) path_tables->Add(info->file_source);
  return info;
}

Result<LogicalOpPtr> Binder::Impl::BindFilePath(Json& rv, QueryState* q) {
  const int location = rv.value("location", -1);
  const std::string path = rv.value("relname", "");
  const std::string alias = rv.contains("alias") ? FoldIdentifier(rv["alias"].value("aliasname", "")) : StemOf(path);
  FileTableOptions options;
  options.partition_values = PartitionFilters(q->where_clause, alias);
  QUIVER_ASSIGN_OR_RETURN(TableInfo info, LoadFiles({path}, options, location));
  return BindScan(info, rv.contains("alias") ? &rv["alias"] : nullptr, alias, location, q);
}

Result<LogicalOpPtr> Binder::Impl::BindFileFunction(Json& rf, QueryState* q) {
  const int location = FirstLocation(rf);
  if (rf.value("lateral", false)) return Unsupported("LATERAL", location);
  if (rf.value("ordinality", false)) return Unsupported("WITH ORDINALITY", location);
  if (!rf.contains("functions") || rf["functions"].size() != 1 || !rf["functions"][0].contains("List") ||
      rf["functions"][0]["List"]["items"].empty() || !rf["functions"][0]["List"]["items"][0].contains("FuncCall"))
    return Unsupported("this function in FROM", location);
  Json& call = rf["functions"][0]["List"]["items"][0]["FuncCall"];
  const std::string fname = call.contains("funcname") ? FoldIdentifier(StringOf(call["funcname"].back())) : "";
  FileTableOptions options;
  if (fname == "read_parquet" || fname == "parquet_scan") {
    options.format = FileFormat::kParquet;
  } else if (fname == "read_csv" || fname == "read_csv_auto") {
    options.format = FileFormat::kCsv;
  } else {
    return Unsupported("the function '" + fname + "' in FROM", location);
  }
  std::vector<std::string> paths;
  auto string_of = [&](const Json& v, std::string* out) {
    if (!v.contains("A_Const") || !v["A_Const"].contains("sval")) return false;
    *out = v["A_Const"]["sval"].value("sval", "");
    return true;
  };
  auto bool_of = [&](const Json& v, const std::string& name) -> Result<bool> {
    if (v.contains("A_Const") && v["A_Const"].contains("boolval"))
      return v["A_Const"]["boolval"].value("boolval", false);
    std::string s;
    if (string_of(v, &s) && (s == "true" || s == "false")) return s == "true";
    return Error(fname + ": " + name + " takes true or false", FirstLocation(v));
  };
  auto char_of = [&](const Json& v, const std::string& name) -> Result<char> {
    std::string s;
    if (!string_of(v, &s)) return Error(fname + ": " + name + " takes a string", FirstLocation(v));
    if (s == "\\t") return '\t';
    if (s.size() != 1)
      return Unsupported(fname + ": " + name + " of other than one byte ('" + s + "')", FirstLocation(v));
    return s[0];
  };
  if (!call.contains("args") || call["args"].empty()) return Error(fname + " needs a path", location);
  for (Json& arg : call["args"]) {
    std::string name;
    Json* value = &arg;
    if (arg.contains("NamedArgExpr")) {
      name = FoldIdentifier(arg["NamedArgExpr"].value("name", ""));
      value = &arg["NamedArgExpr"]["arg"];
    } else if (arg.contains("A_Expr") && arg["A_Expr"].value("kind", "") == "AEXPR_OP" &&
               arg["A_Expr"].contains("lexpr") && arg["A_Expr"]["lexpr"].contains("ColumnRef") &&
               arg["A_Expr"]["lexpr"]["ColumnRef"]["fields"].size() == 1 &&
               StringOf(arg["A_Expr"]["name"].back()) == "=") {
      name = FoldIdentifier(StringOf(arg["A_Expr"]["lexpr"]["ColumnRef"]["fields"][0]));  // DuckDB's `name = value`
      value = &arg["A_Expr"]["rexpr"];
    }
    const int at = FirstLocation(arg);
    if (name.empty()) {
      if (!paths.empty()) return Error(fname + " takes one path (or a list of paths) before its named parameters", at);
      std::string p;
      if (string_of(*value, &p)) {
        paths.push_back(p);
      } else if (value->contains("A_ArrayExpr")) {
        for (const auto& e : (*value)["A_ArrayExpr"]["elements"]) {
          if (!string_of(e, &p)) return Error(fname + ": a list of paths must hold strings", at);
          paths.push_back(p);
        }
      }
      if (paths.empty()) return Error(fname + ": the path must be a string literal or a list of them", at);
      continue;
    }
    if (name == "hive_partitioning") {
      QUIVER_ASSIGN_OR_RETURN(options.hive_partitioning, bool_of(*value, name));
    } else if (options.format == FileFormat::kCsv && name == "header") {
      QUIVER_ASSIGN_OR_RETURN(bool h, bool_of(*value, name));
      options.csv.header = h ? formats::csv::HeaderMode::kPresent : formats::csv::HeaderMode::kAbsent;
    } else if (options.format == FileFormat::kCsv && (name == "delim" || name == "sep" || name == "delimiter")) {
      QUIVER_ASSIGN_OR_RETURN(options.csv.delimiter, char_of(*value, name));
    } else if (options.format == FileFormat::kCsv && name == "quote") {
      QUIVER_ASSIGN_OR_RETURN(options.csv.quote, char_of(*value, name));
    } else if (options.format == FileFormat::kCsv && (name == "nullstr" || name == "null")) {
      std::string s;
      if (!string_of(*value, &s)) return Error(fname + ": " + name + " takes a string", at);
      options.csv.null_values.push_back(s);
    } else if (options.format == FileFormat::kCsv && (name == "types" || name == "dtypes" || name == "column_types")) {
      // DuckDB's list form (types of the first columns by position), written
      // ARRAY['BIGINT', 'DECIMAL(15,2)'], or by name with struct_pack(col
      // := 'TYPE', ...) (DuckDB's {'col': 'TYPE'} does not parse here).
      auto type_of = [&](const Json& v) -> Result<DataTypePtr> {
        std::string t;
        if (!string_of(v, &t)) return Error(fname + ": " + name + " takes type names as strings", FirstLocation(v));
        auto type = formats::csv::CsvTypeFromName(t);
        if (!type.ok()) return Error(fname + ": " + type.status().message(), FirstLocation(v));
        return *type;
      };
      if (value->contains("A_ArrayExpr")) {
        for (const auto& e : (*value)["A_ArrayExpr"]["elements"]) {
          QUIVER_ASSIGN_OR_RETURN(auto type, type_of(e));
          options.csv.column_types_by_position.push_back(std::move(type));
        }
      } else if (value->contains("FuncCall") && (*value)["FuncCall"].contains("funcname") &&
                 FoldIdentifier(StringOf((*value)["FuncCall"]["funcname"].back())) == "struct_pack") {
        Json& pack = (*value)["FuncCall"];
        if (!pack.contains("args")) return Error(fname + ": " + name + ": struct_pack() names no column", at);
        for (const auto& a : pack["args"]) {
          if (!a.contains("NamedArgExpr"))
            return Error(fname + ": " + name + ": struct_pack takes column := 'TYPE' pairs", FirstLocation(a));
          QUIVER_ASSIGN_OR_RETURN(auto type, type_of(a["NamedArgExpr"]["arg"]));
          options.csv.column_types[a["NamedArgExpr"].value("name", "")] = std::move(type);
        }
      } else {
        return Error(fname + ": " + name +
                         " takes ARRAY['TYPE', ...] (by position) or struct_pack(column := 'TYPE', ...) (by name)",
                     at);
      }
    } else if (options.format == FileFormat::kCsv && name == "auto_detect") {
      QUIVER_ASSIGN_OR_RETURN(bool on, bool_of(*value, name));
      if (!on) return Unsupported(fname + ": auto_detect = false", at);
    } else {
      return Unsupported(fname + "'s parameter '" + name + "'", at);
    }
  }
  if (paths.empty()) return Error(fname + " needs a path", location);
  const std::string alias =
      rf.contains("alias") ? FoldIdentifier(rf["alias"].value("aliasname", "")) : StemOf(paths[0]);
  options.partition_values = PartitionFilters(q->where_clause, alias);
  QUIVER_ASSIGN_OR_RETURN(TableInfo info, LoadFiles(paths, options, location));
  return BindScan(info, rf.contains("alias") ? &rf["alias"] : nullptr, alias, location, q);
}

}  // namespace quiver::sql
