// quiver/sql/catalog_writes.cc — see catalog_writes.h.
#include "quiver/sql/catalog_writes.h"

#include <cstring>

#include "quiver/sql/execution/operators.h"
#include "quiver/sql/expression/kernels.h"

namespace quiver::sql {

namespace {

using Json = nlohmann::json;

Status TableExists(const std::string& name, const std::string& where) {
  return Status::Invalid("relation '" + name + "' already exists (" + where + ")").WithSqlState("42P07");
}

Status NoTable(const std::string& name, const std::string& where) {
  return Status::KeyError("no table named '" + name + "' (" + where + ")").WithSqlState("42P01");
}

// The table named by a RangeVar (no schema other than quiver's default).
Result<std::string> TableName(const Json& range_var, const CatalogWriteContext& ctx) {
  const int location = range_var.value("location", 0);
  const std::string schema = FoldIdentifier(range_var.value("schemaname", ""));
  if (!schema.empty() && schema != "default" && schema != "public")
    return ctx.unsupported("a table in schema '" + schema + "'", location);
  if (range_var.value("relpersistence", "p") != "p") return ctx.unsupported("a temporary or unlogged table", location);
  return FoldIdentifier(range_var.value("relname", ""));
}

// Every row of `batches` as values of column `c`, cast to `type`.
Status AppendColumn(const std::vector<RecordBatchPtr>& batches, size_t c, const DataTypePtr& type, MemoryPool* scratch,
                    std::vector<Value>* out) {
  for (const auto& b : batches) {
    QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr a, Canonicalize(b->columns[c], scratch));
    Vec v;
    v.array = a;
    for (int64_t r = 0; r < b->num_rows; ++r) {
      QUIVER_ASSIGN_OR_RETURN(Value x, kernels::CastValue(ValueAt(v, r), type));
      x.type = type;
      out->push_back(std::move(x));
    }
  }
  return Status::OK();
}

// One batch of `schema` from per-column values.
Result<RecordBatchPtr> BatchOfValues(const SchemaPtr& schema, const std::vector<std::vector<Value>>& columns,
                                     MemoryPool* pool) {
  std::vector<ArrayDataPtr> arrays;
  int64_t rows = 0;
  for (size_t c = 0; c < columns.size(); ++c) {
    QUIVER_ASSIGN_OR_RETURN(ArrayDataPtr a, ArrayFromValues(schema->fields[c]->type, columns[c], pool));
    rows = a->length;
    arrays.push_back(std::move(a));
  }
  return MakeBatch(schema, rows, std::move(arrays));
}

Status CheckStorable(const SchemaPtr& schema, const CatalogWriteContext& ctx, int location) {
  for (const auto& f : schema->fields) {
    const TypeClass c = ClassOf(*f->type);
    if (c == TypeClass::kOther) return ctx.unsupported("a table column of type " + f->type->ToString(), location);
  }
  return Status::OK();
}

Status CreateTable(Json& stmt, int location, const CatalogWriteContext& ctx) {
  QUIVER_ASSIGN_OR_RETURN(const std::string name, TableName(stmt["relation"], ctx));
  if (stmt.contains("inhRelations") || stmt.contains("partspec") || stmt.contains("ofTypename"))
    return ctx.unsupported("CREATE TABLE ... INHERITS / PARTITION / OF", location);
  if (ctx.catalog->GetTable(name).ok()) {
    if (stmt.value("if_not_exists", false)) return Status::OK();
    return TableExists(name, ctx.where(location));
  }
  // The column types, as the binder reads them in CAST(NULL AS type).
  Json select = Json::object();
  select["targetList"] = Json::array();
  select["limitOption"] = "LIMIT_OPTION_DEFAULT";
  select["op"] = "SETOP_NONE";
  if (!stmt.contains("tableElts") || stmt["tableElts"].empty())
    return ctx.unsupported("CREATE TABLE without columns", location);
  for (auto& elt : stmt["tableElts"]) {
    if (!elt.contains("ColumnDef")) continue;  // a table constraint (PRIMARY KEY (a, b)): not enforced
    Json& def = elt["ColumnDef"];
    if (def.contains("collClause")) return ctx.unsupported("COLLATE", def.value("location", location));
    if (def.contains("constraints"))
      for (auto& con : def["constraints"]) {
        const std::string kind = con.contains("Constraint") ? con["Constraint"].value("contype", "") : "";
        if (kind != "CONSTR_NULL" && kind != "CONSTR_NOTNULL" && kind != "CONSTR_PRIMARY" && kind != "CONSTR_UNIQUE")
          return ctx.unsupported("a column constraint other than NULL, NOT NULL, PRIMARY KEY, UNIQUE",
                                 def.value("location", location));
      }
    Json target = Json::object();
    target["ResTarget"]["name"] = def.value("colname", "");
    target["ResTarget"]["location"] = def.value("location", location);
    Json& cast = target["ResTarget"]["val"]["TypeCast"];
    cast["arg"]["A_Const"]["isnull"] = true;
    cast["arg"]["A_Const"]["location"] = def.value("location", location);
    cast["typeName"] = def["typeName"];
    cast["location"] = def.value("location", location);
    select["targetList"].push_back(std::move(target));
  }
  SchemaPtr result;
  QUIVER_ASSIGN_OR_RETURN(auto ignored, ctx.run_query(select, &result));
  (void)ignored;
  auto schema = std::make_shared<Schema>();
  for (const auto& f : result->fields) {
    for (const auto& g : schema->fields)
      if (FoldIdentifier(g->name) == FoldIdentifier(f->name))
        return Status::Invalid("column '" + f->name + "' specified more than once (" + ctx.where(location) + ")")
            .WithSqlState("42701");
    schema->fields.push_back(field(f->name, f->type, true));
  }
  QUIVER_RETURN_NOT_OK(CheckStorable(schema, ctx, location));
  return ctx.catalog->RegisterBatches(name, schema, {});
}

Status CreateTableAs(Json& stmt, int location, const CatalogWriteContext& ctx) {
  if (stmt.value("objtype", "OBJECT_TABLE") != "OBJECT_TABLE")
    return ctx.unsupported("CREATE MATERIALIZED VIEW", location);
  Json& into = stmt["into"];
  QUIVER_ASSIGN_OR_RETURN(const std::string name, TableName(into["rel"], ctx));
  if (!stmt.contains("query") || !stmt["query"].contains("SelectStmt"))
    return ctx.unsupported("CREATE TABLE AS other than a query", location);
  if (into.value("skipData", false)) return ctx.unsupported("CREATE TABLE AS ... WITH NO DATA", location);
  if (ctx.catalog->GetTable(name).ok()) {
    if (stmt.value("if_not_exists", false)) return Status::OK();
    return TableExists(name, ctx.where(location));
  }
  SchemaPtr result;
  QUIVER_ASSIGN_OR_RETURN(auto batches, ctx.run_query(stmt["query"]["SelectStmt"], &result));
  auto schema = std::make_shared<Schema>();
  std::vector<std::string> names;
  for (const auto& f : result->fields) names.push_back(f->name);
  if (into.contains("colNames")) {
    if (into["colNames"].size() > names.size())
      return Status::Invalid("CREATE TABLE AS specifies too many column names (" + ctx.where(location) + ")")
          .WithSqlState("42601");
    size_t k = 0;
    for (auto& n : into["colNames"]) names[k++] = n.contains("String") ? n["String"].value("sval", "") : "";
  }
  for (size_t c = 0; c < names.size(); ++c) {
    DataTypePtr t = result->fields[c]->type;
    // An untyped NULL column is stored as text (PostgreSQL's unknown).
    if (t->id == TypeId::kNull) t = utf8();
    for (const auto& g : schema->fields)
      if (FoldIdentifier(g->name) == FoldIdentifier(names[c]))
        return Status::Invalid("column '" + names[c] + "' specified more than once (" + ctx.where(location) + ")")
            .WithSqlState("42701");
    schema->fields.push_back(field(names[c], t, true));
  }
  QUIVER_RETURN_NOT_OK(CheckStorable(schema, ctx, location));
  std::vector<std::vector<Value>> columns(names.size());
  for (size_t c = 0; c < names.size(); ++c)
    QUIVER_RETURN_NOT_OK(AppendColumn(batches, c, schema->fields[c]->type, ctx.table_pool, &columns[c]));
  QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr batch, BatchOfValues(schema, columns, ctx.table_pool));
  std::vector<RecordBatchPtr> stored;
  if (batch->num_rows > 0) stored.push_back(batch);
  return ctx.catalog->RegisterBatches(name, schema, std::move(stored));
}

Status Insert(Json& stmt, int location, const CatalogWriteContext& ctx) {
  QUIVER_ASSIGN_OR_RETURN(const std::string name, TableName(stmt["relation"], ctx));
  if (stmt.contains("onConflictClause")) return ctx.unsupported("INSERT ... ON CONFLICT", location);
  if (stmt.contains("returningList")) return ctx.unsupported("INSERT ... RETURNING", location);
  if (stmt.contains("withClause")) return ctx.unsupported("WITH ... INSERT", location);
  if (stmt["relation"].contains("alias")) return ctx.unsupported("an alias on the INSERT target", location);
  auto info = ctx.catalog->GetTable(name);
  if (!info.ok()) return NoTable(name, ctx.where(stmt["relation"].value("location", location)));
  if (!info->in_memory()) return ctx.unsupported("INSERT into a table read from a file", location);
  const SchemaPtr& schema = info->schema;
  // Which table column each value goes to.
  std::vector<int> targets;
  if (stmt.contains("cols")) {
    for (auto& c : stmt["cols"]) {
      const Json& rt = c["ResTarget"];
      if (rt.contains("indirection")) return ctx.unsupported("INSERT into a subfield", rt.value("location", location));
      const std::string col = FoldIdentifier(rt.value("name", ""));
      int found = -1;
      for (size_t k = 0; k < schema->fields.size(); ++k)
        if (FoldIdentifier(schema->fields[k]->name) == col) found = static_cast<int>(k);
      if (found < 0)
        return Status::KeyError("column '" + col + "' of table '" + name + "' does not exist (" +
                                ctx.where(rt.value("location", location)) + ")")
            .WithSqlState("42703");
      for (int t : targets)
        if (t == found)
          return Status::Invalid("column '" + col + "' specified more than once (" +
                                 ctx.where(rt.value("location", location)) + ")")
              .WithSqlState("42701");
      targets.push_back(found);
    }
  } else {
    for (size_t k = 0; k < schema->fields.size(); ++k) targets.push_back(static_cast<int>(k));
  }
  if (!stmt.contains("selectStmt")) return ctx.unsupported("INSERT ... DEFAULT VALUES", location);
  Json& select = stmt["selectStmt"]["SelectStmt"];
  // The rows to insert: each VALUES row on its own (assignment casts per
  // value, no common type across rows), or the query's result.
  std::vector<std::vector<Value>> columns(schema->fields.size());
  auto add = [&](const std::vector<RecordBatchPtr>& batches, const SchemaPtr& result) -> Status {
    if (result->fields.size() > targets.size())
      return Status::Invalid("INSERT has more expressions than target columns (" + ctx.where(location) + ")")
          .WithSqlState("42601");
    if (result->fields.size() < targets.size() && stmt.contains("cols"))
      return Status::Invalid("INSERT has more target columns than expressions (" + ctx.where(location) + ")")
          .WithSqlState("42601");
    int64_t rows = 0;
    for (const auto& b : batches) rows += b->num_rows;
    for (size_t k = 0; k < targets.size(); ++k) {
      const auto t = static_cast<size_t>(targets[k]);
      if (k < result->fields.size()) {
        QUIVER_RETURN_NOT_OK(AppendColumn(batches, k, schema->fields[t]->type, ctx.table_pool, &columns[t]));
      }
    }
    // Columns not given: NULL.
    for (size_t t = 0; t < columns.size(); ++t) {
      bool given = false;
      for (size_t k = 0; k < targets.size() && k < result->fields.size(); ++k)
        given |= targets[k] == static_cast<int>(t);
      if (!given)
        for (int64_t r = 0; r < rows; ++r) columns[t].push_back(Value::Null(schema->fields[t]->type));
    }
    return Status::OK();
  };
  if (select.contains("valuesLists")) {
    for (auto& row : select["valuesLists"]) {
      Json one = Json::object();
      one["targetList"] = Json::array();
      one["limitOption"] = "LIMIT_OPTION_DEFAULT";
      one["op"] = "SETOP_NONE";
      for (auto& item : row["List"]["items"]) {
        if (item.contains("SetToDefault")) return ctx.unsupported("DEFAULT in VALUES", location);
        Json target = Json::object();
        target["ResTarget"]["val"] = item;
        target["ResTarget"]["location"] = location;
        one["targetList"].push_back(std::move(target));
      }
      SchemaPtr result;
      QUIVER_ASSIGN_OR_RETURN(auto batches, ctx.run_query(one, &result));
      QUIVER_RETURN_NOT_OK(add(batches, result));
    }
  } else {
    SchemaPtr result;
    QUIVER_ASSIGN_OR_RETURN(auto batches, ctx.run_query(select, &result));
    QUIVER_RETURN_NOT_OK(add(batches, result));
  }
  QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr batch, BatchOfValues(schema, columns, ctx.table_pool));
  if (batch->num_rows == 0) return Status::OK();
  return ctx.catalog->AppendBatches(name, {batch});
}

Status DropTables(Json& stmt, int location, const CatalogWriteContext& ctx) {
  if (stmt.value("removeType", "") != "OBJECT_TABLE") return ctx.unsupported("DROP other than DROP TABLE", location);
  if (stmt.value("behavior", "DROP_RESTRICT") == "DROP_CASCADE") return ctx.unsupported("DROP ... CASCADE", location);
  std::vector<std::string> names;
  for (auto& obj : stmt["objects"]) {
    std::vector<std::string> parts;
    for (auto& p : obj["List"]["items"]) parts.push_back(FoldIdentifier(p["String"].value("sval", "")));
    if (parts.empty()) continue;
    if (parts.size() > 1 && parts[parts.size() - 2] != "default" && parts[parts.size() - 2] != "public")
      return ctx.unsupported("a table in schema '" + parts[parts.size() - 2] + "'", location);
    names.push_back(parts.back());
  }
  // All or nothing: every table must exist (unless IF EXISTS) before any goes.
  const bool missing_ok = stmt.value("missing_ok", false);
  for (const auto& n : names)
    if (!ctx.catalog->GetTable(n).ok() && !missing_ok) return NoTable(n, ctx.where(location));
  for (const auto& n : names) {
    Status st = ctx.catalog->Unregister(n);
    if (!st.ok() && !missing_ok) return st;
  }
  return Status::OK();
}

}  // namespace

bool IsCatalogWrite(const std::string& key) {
  return key == "CreateStmt" || key == "CreateTableAsStmt" || key == "InsertStmt" || key == "DropStmt";
}

Status ExecuteCatalogWrite(const std::string& key, Json& stmt, int location, const CatalogWriteContext& ctx) {
  if (key == "CreateStmt") return CreateTable(stmt, location, ctx);
  if (key == "CreateTableAsStmt") return CreateTableAs(stmt, location, ctx);
  if (key == "InsertStmt") return Insert(stmt, location, ctx);
  if (key == "DropStmt") return DropTables(stmt, location, ctx);
  return ctx.unsupported(key, location);
}

Result<ArrayDataPtr> ArrayFromValues(const DataTypePtr& type, const std::vector<Value>& values, MemoryPool* pool) {
  const auto n = static_cast<int64_t>(values.size());
  const TypeClass cls = ClassOf(*type);
  if (cls == TypeClass::kNull) {
    auto a = std::make_shared<ArrayData>();
    a->type = null();
    a->length = n;
    a->null_count = n;
    return ArrayDataPtr(a);
  }
  if (cls == TypeClass::kString) {
    int64_t bytes = 0;
    for (const auto& v : values) bytes += static_cast<int64_t>(v.s.size());
    QUIVER_ASSIGN_OR_RETURN(auto b, StringBuilder::Make(n, bytes, pool));
    for (const auto& v : values) QUIVER_RETURN_NOT_OK(v.is_null ? b.AppendNull() : b.Append(v.s));
    return b.Finish();
  }
  if (cls == TypeClass::kOther) return Status::NotImplemented("a column of type " + type->ToString());
  QUIVER_ASSIGN_OR_RETURN(auto b, FixedBuilder::Make(type, n, pool));
  for (int64_t r = 0; r < n; ++r) {
    const Value& v = values[static_cast<size_t>(r)];
    if (v.is_null) QUIVER_RETURN_NOT_OK(b.SetNull(r));
    // A NULL's value bytes are zero.
    QUIVER_RETURN_NOT_OK(b.SetValue(r, v.is_null ? 0 : v.i, v.is_null ? 0 : v.f));
  }
  return b.Finish();
}

}  // namespace quiver::sql
