// quiver/server/catalog_results.cc — metadata operation results.
#include "quiver/server/catalog_results.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "quiver/server/hive_types.h"
#include "quiver/sql/expression/function_catalog.h"

namespace quiver::server {
namespace {

Result<ArrayDataPtr> Utf8Array(const std::vector<std::string>& values, MemoryPool* pool) {
  int64_t total = 0;
  for (const auto& v : values) total += static_cast<int64_t>(v.size());
  if (total > INT32_MAX) return Status::Invalid("metadata result: string column over 2 GiB");
  QUIVER_ASSIGN_OR_RETURN(auto offsets, Buffer::Allocate(pool, (static_cast<int64_t>(values.size()) + 1) * 4));
  QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::Allocate(pool, total));
  auto* off = reinterpret_cast<int32_t*>(offsets->mutable_data());
  int32_t pos = 0;
  off[0] = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].empty()) std::memcpy(data->mutable_data() + pos, values[i].data(), values[i].size());
    pos += static_cast<int32_t>(values[i].size());
    off[i + 1] = pos;
  }
  auto a = std::make_shared<ArrayData>();
  a->type = utf8();
  a->length = static_cast<int64_t>(values.size());
  a->buffers = {nullptr, offsets, data};
  return ArrayDataPtr(a);
}

Result<ArrayDataPtr> Int32Array(const std::vector<int32_t>& values, MemoryPool* pool) {
  QUIVER_ASSIGN_OR_RETURN(auto data, Buffer::Allocate(pool, static_cast<int64_t>(values.size()) * 4));
  if (!values.empty()) std::memcpy(data->mutable_data(), values.data(), values.size() * 4);
  auto a = std::make_shared<ArrayData>();
  a->type = int32();
  a->length = static_cast<int64_t>(values.size());
  a->buffers = {nullptr, data};
  return ArrayDataPtr(a);
}

// Columns of one result, built row by row.
class TableBuilder {
 public:
  void AddUtf8(const std::string& name) { cols_.push_back({name, true, {}, {}}); }
  void AddInt32(const std::string& name) { cols_.push_back({name, false, {}, {}}); }
  void Set(size_t col, std::string v) { cols_[col].s.push_back(std::move(v)); }
  void Set(size_t col, int32_t v) { cols_[col].i.push_back(v); }
  Result<std::unique_ptr<RecordBatchStream>> Finish(MemoryPool* pool) {
    auto schema = std::make_shared<Schema>();
    auto batch = std::make_shared<RecordBatch>();
    int64_t rows = 0;
    for (const auto& c : cols_) {
      schema->fields.push_back(field(c.name, c.is_utf8 ? utf8() : int32(), false));
      ArrayDataPtr a;
      if (c.is_utf8) {
        QUIVER_ASSIGN_OR_RETURN(a, Utf8Array(c.s, pool));
      } else {
        QUIVER_ASSIGN_OR_RETURN(a, Int32Array(c.i, pool));
      }
      rows = a->length;
      batch->columns.push_back(a);
    }
    batch->schema = schema;
    batch->num_rows = rows;
    QUIVER_RETURN_NOT_OK(batch->CheckShape());
    std::vector<RecordBatchPtr> batches;
    if (rows > 0) batches.push_back(batch);
    return std::unique_ptr<RecordBatchStream>(new BatchVectorStream(schema, std::move(batches)));
  }

 private:
  struct Col {
    std::string name;
    bool is_utf8;
    std::vector<std::string> s;
    std::vector<int32_t> i;
  };
  std::vector<Col> cols_;
};

bool CatalogMatches(const std::string& catalog) { return catalog.empty() || LikeMatch(catalog, kCatalogName); }

}  // namespace

bool LikeMatch(std::string_view p, std::string_view s) {
  if (p.empty()) return true;
  // Iterative wildcard matching with backtracking to the last '%'.
  size_t pi = 0, si = 0, star = std::string_view::npos, mark = 0;
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '%') {
      star = ++pi;
      mark = si;
      continue;
    }
    if (pi < p.size()) {
      bool escaped = p[pi] == '\\' && pi + 1 < p.size();
      char pc = escaped ? p[pi + 1] : p[pi];
      if ((!escaped && pc == '_') || lower(pc) == lower(s[si])) {
        pi += escaped ? 2 : 1;
        ++si;
        continue;
      }
    }
    if (star == std::string_view::npos) return false;
    pi = star;
    si = ++mark;
  }
  while (pi < p.size() && p[pi] == '%') ++pi;
  return pi == p.size();
}

int32_t JdbcTypeCode(int hive) {
  switch (hive) {
    case 0: return 16;     // BOOLEAN
    case 1: return -6;     // TINYINT
    case 2: return 5;      // SMALLINT
    case 3: return 4;      // INTEGER
    case 4: return -5;     // BIGINT
    case 5: return 6;      // FLOAT
    case 6: return 8;      // DOUBLE
    case 7: return 12;     // VARCHAR (STRING)
    case 8: return 93;     // TIMESTAMP
    case 9: return -2;     // BINARY
    case 10: return 2003;  // ARRAY
    case 11: return 2000;  // MAP (JAVA_OBJECT)
    case 12: return 2002;  // STRUCT
    case 15: return 3;     // DECIMAL
    case 16: return 0;     // NULL
    case 17: return 91;    // DATE
    case 18: return 12;    // VARCHAR
    case 19: return 1;     // CHAR
    default: return 1111;  // OTHER
  }
}

Result<std::unique_ptr<RecordBatchStream>> CatalogsResult(MemoryPool* pool) {
  TableBuilder b;
  b.AddUtf8("TABLE_CAT");
  b.Set(0, std::string(kCatalogName));
  return b.Finish(pool);
}

Result<std::unique_ptr<RecordBatchStream>> SchemasResult(const std::string& catalog, const std::string& schema_pattern,
                                                         MemoryPool* pool) {
  TableBuilder b;
  b.AddUtf8("TABLE_SCHEM");
  b.AddUtf8("TABLE_CATALOG");
  if (CatalogMatches(catalog) && LikeMatch(schema_pattern, kSchemaName)) {
    b.Set(0, std::string(kSchemaName));
    b.Set(1, std::string(kCatalogName));
  }
  return b.Finish(pool);
}

Result<std::unique_ptr<RecordBatchStream>> TablesResult(const std::vector<TableInfo>& tables,
                                                        const std::string& catalog, const std::string& schema_pattern,
                                                        const std::string& table_pattern, MemoryPool* pool) {
  TableBuilder b;
  for (const char* n : {"TABLE_CAT", "TABLE_SCHEM", "TABLE_NAME", "TABLE_TYPE", "REMARKS"}) b.AddUtf8(n);
  if (CatalogMatches(catalog) && LikeMatch(schema_pattern, kSchemaName)) {
    for (const auto& t : tables) {
      if (!LikeMatch(table_pattern, t.name)) continue;
      b.Set(0, std::string(kCatalogName));
      b.Set(1, std::string(kSchemaName));
      b.Set(2, t.name);
      b.Set(3, std::string("TABLE"));
      b.Set(4, std::string());
    }
  }
  return b.Finish(pool);
}

Result<std::unique_ptr<RecordBatchStream>> ColumnsResult(
    const std::vector<TableInfo>& tables, const std::string& catalog, const std::string& schema_pattern,
    const std::string& table_pattern, const std::string& column_pattern,
    const std::function<ColumnTypeInfo(const DataType&)>& type_info, MemoryPool* pool) {
  TableBuilder b;
  b.AddUtf8("TABLE_CAT");
  b.AddUtf8("TABLE_SCHEM");
  b.AddUtf8("TABLE_NAME");
  b.AddUtf8("COLUMN_NAME");
  b.AddInt32("DATA_TYPE");
  b.AddUtf8("TYPE_NAME");
  b.AddInt32("COLUMN_SIZE");
  b.AddInt32("DECIMAL_DIGITS");
  b.AddInt32("NULLABLE");
  b.AddUtf8("REMARKS");
  b.AddInt32("ORDINAL_POSITION");
  b.AddUtf8("IS_NULLABLE");
  if (CatalogMatches(catalog) && LikeMatch(schema_pattern, kSchemaName)) {
    for (const auto& t : tables) {
      if (!LikeMatch(table_pattern, t.name)) continue;
      for (int i = 0; i < t.schema->num_fields(); ++i) {
        const Field& f = *t.schema->fields[i];
        if (!LikeMatch(column_pattern, f.name)) continue;
        const ColumnTypeInfo info = type_info(*f.type);
        b.Set(0, std::string(kCatalogName));
        b.Set(1, std::string(kSchemaName));
        b.Set(2, t.name);
        b.Set(3, f.name);
        b.Set(4, info.jdbc_type);
        b.Set(5, info.type_name);
        b.Set(6, info.column_size);
        b.Set(7, info.decimal_digits);
        b.Set(8, int32_t{f.nullable ? 1 : 0});
        b.Set(9, std::string());
        b.Set(10, int32_t{i + 1});
        b.Set(11, std::string(f.nullable ? "YES" : "NO"));
      }
    }
  }
  return b.Finish(pool);
}

Result<std::unique_ptr<RecordBatchStream>> TypeInfoResult(MemoryPool* pool) {
  TableBuilder b;
  b.AddUtf8("TYPE_NAME");
  b.AddInt32("DATA_TYPE");
  static const std::pair<const char*, int> kTypes[] = {
      {"BOOLEAN", 0}, {"TINYINT", 1},  {"SMALLINT", 2},  {"INT", 3},    {"BIGINT", 4}, {"FLOAT", 5},
      {"DOUBLE", 6},  {"STRING", 7},   {"TIMESTAMP", 8}, {"BINARY", 9}, {"ARRAY", 10}, {"MAP", 11},
      {"STRUCT", 12}, {"DECIMAL", 15}, {"NULL", 16},     {"DATE", 17}};
  for (const auto& [name, hive] : kTypes) {
    b.Set(0, std::string(name));
    b.Set(1, JdbcTypeCode(hive));
  }
  return b.Finish(pool);
}

Result<std::unique_ptr<RecordBatchStream>> FunctionsResult(const std::string& catalog,
                                                           const std::string& schema_pattern,
                                                           const std::string& function_pattern, MemoryPool* pool) {
  TableBuilder b;
  for (const char* n : {"FUNCTION_CAT", "FUNCTION_SCHEM", "FUNCTION_NAME", "REMARKS"}) b.AddUtf8(n);
  b.AddInt32("FUNCTION_TYPE");
  b.AddUtf8("SPECIFIC_NAME");
  if (!CatalogMatches(catalog) || !LikeMatch(schema_pattern, kSchemaName)) return b.Finish(pool);
  // (name, entry) for every name and alias, sorted by name.
  std::vector<std::pair<std::string, const sql::FunctionDoc*>> rows;
  for (const sql::FunctionDoc& d : sql::FunctionCatalog()) {
    if (LikeMatch(function_pattern, d.name)) rows.emplace_back(std::string(d.name), &d);
    for (std::string_view a : sql::AliasesOf(d))
      if (LikeMatch(function_pattern, a)) rows.emplace_back(std::string(a), &d);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (const auto& [name, d] : rows) {
    b.Set(0, std::string(kCatalogName));
    b.Set(1, std::string(kSchemaName));
    b.Set(2, name);
    b.Set(3, std::string(d->signature) + ": " + std::string(d->summary));
    b.Set(4, int32_t{0});
    b.Set(5, std::string(d->name));
  }
  return b.Finish(pool);
}

namespace {
std::string Or(bool set, const std::string& value) { return set ? value : std::string(); }
}  // namespace

Result<std::unique_ptr<RecordBatchStream>> MetadataResult(const t::TGetCatalogsReq&, const StatementExecutor&,
                                                          MemoryPool* pool) {
  return CatalogsResult(pool);
}
Result<std::unique_ptr<RecordBatchStream>> MetadataResult(const t::TGetSchemasReq& req, const StatementExecutor&,
                                                          MemoryPool* pool) {
  return SchemasResult(Or(req.__isset.catalogName, req.catalogName), Or(req.__isset.schemaName, req.schemaName), pool);
}
Result<std::unique_ptr<RecordBatchStream>> MetadataResult(const t::TGetTablesReq& req, const StatementExecutor& ex,
                                                          MemoryPool* pool) {
  return TablesResult(ex.ListTables(), Or(req.__isset.catalogName, req.catalogName),
                      Or(req.__isset.schemaName, req.schemaName), Or(req.__isset.tableName, req.tableName), pool);
}
Result<std::unique_ptr<RecordBatchStream>> MetadataResult(const t::TGetColumnsReq& req, const StatementExecutor& ex,
                                                          MemoryPool* pool) {
  return ColumnsResult(ex.ListTables(), Or(req.__isset.catalogName, req.catalogName),
                       Or(req.__isset.schemaName, req.schemaName), Or(req.__isset.tableName, req.tableName),
                       Or(req.__isset.columnName, req.columnName), &HiveTypeInfo, pool);
}
Result<std::unique_ptr<RecordBatchStream>> MetadataResult(const t::TGetTypeInfoReq&, const StatementExecutor&,
                                                          MemoryPool* pool) {
  return TypeInfoResult(pool);
}
Result<std::unique_ptr<RecordBatchStream>> MetadataResult(const t::TGetFunctionsReq& req, const StatementExecutor&,
                                                          MemoryPool* pool) {
  return FunctionsResult(Or(req.__isset.catalogName, req.catalogName), Or(req.__isset.schemaName, req.schemaName),
                         req.functionName, pool);
}

bool FillInfoValue(int32_t info_type, int max_operations, t::TGetInfoValue* out) {
  switch (info_type) {
    case t::TGetInfoType::CLI_SERVER_NAME: out->__set_stringValue("quiver"); break;
    case t::TGetInfoType::CLI_DBMS_NAME: out->__set_stringValue("quiver"); break;
    case t::TGetInfoType::CLI_DBMS_VER: out->__set_stringValue("0.1.0"); break;
    case t::TGetInfoType::CLI_MAX_CONCURRENT_ACTIVITIES: out->__set_integerFlag(max_operations); break;
    case t::TGetInfoType::CLI_DATA_SOURCE_READ_ONLY: out->__set_stringValue("Y"); break;
    // What ODBC/JDBC bridges and BI tools ask when they connect.
    case t::TGetInfoType::CLI_DATA_SOURCE_NAME: out->__set_stringValue("quiver"); break;
    case t::TGetInfoType::CLI_MAX_DRIVER_CONNECTIONS: out->__set_smallIntValue(0); break;  // no limit
    case t::TGetInfoType::CLI_FETCH_DIRECTION: out->__set_integerBitmask(1); break;        // next only
    case t::TGetInfoType::CLI_SEARCH_PATTERN_ESCAPE: out->__set_stringValue("\\"); break;
    case t::TGetInfoType::CLI_ACCESSIBLE_TABLES: out->__set_stringValue("Y"); break;
    case t::TGetInfoType::CLI_ACCESSIBLE_PROCEDURES: out->__set_stringValue("N"); break;
    case t::TGetInfoType::CLI_TXN_CAPABLE: out->__set_smallIntValue(0); break;  // SQL_TC_NONE
    case t::TGetInfoType::CLI_DEFAULT_TXN_ISOLATION: out->__set_integerBitmask(0); break;
    case t::TGetInfoType::CLI_TXN_ISOLATION_OPTION: out->__set_integerBitmask(0); break;
    case t::TGetInfoType::CLI_IDENTIFIER_CASE: out->__set_smallIntValue(4); break;  // SQL_IC_MIXED
    case t::TGetInfoType::CLI_IDENTIFIER_QUOTE_CHAR: out->__set_stringValue("\""); break;
    case t::TGetInfoType::CLI_CATALOG_NAME: out->__set_stringValue("N"); break;
    case t::TGetInfoType::CLI_USER_NAME: out->__set_stringValue(""); break;
    case t::TGetInfoType::CLI_NULL_COLLATION: out->__set_smallIntValue(1); break;  // SQL_NC_LOW
    case t::TGetInfoType::CLI_ORDER_BY_COLUMNS_IN_SELECT: out->__set_stringValue("N"); break;
    case t::TGetInfoType::CLI_SPECIAL_CHARACTERS: out->__set_stringValue(""); break;
    case t::TGetInfoType::CLI_OJ_CAPABILITIES: out->__set_integerBitmask(0x1 | 0x2 | 0x4 | 0x8); break;
    case t::TGetInfoType::CLI_MAX_COLUMN_NAME_LEN:
    case t::TGetInfoType::CLI_MAX_SCHEMA_NAME_LEN:
    case t::TGetInfoType::CLI_MAX_CATALOG_NAME_LEN:
    case t::TGetInfoType::CLI_MAX_TABLE_NAME_LEN:
    case t::TGetInfoType::CLI_MAX_IDENTIFIER_LEN: out->__set_smallIntValue(128); break;
    case t::TGetInfoType::CLI_MAX_COLUMNS_IN_SELECT:
    case t::TGetInfoType::CLI_MAX_COLUMNS_IN_TABLE:
    case t::TGetInfoType::CLI_MAX_TABLES_IN_SELECT:
    case t::TGetInfoType::CLI_MAX_ROW_SIZE:
    case t::TGetInfoType::CLI_MAX_STATEMENT_LEN: out->__set_integerFlag(0); break;  // no fixed limit
    default: return false;
  }
  return true;
}

}  // namespace quiver::server
