// quiver/sql/catalog_writes.h — the statements that change the tables of a
// writable catalog (Engine::WithWritableCatalog), kept in memory: what
// sqllogictest files and small scripts need, not a storage engine.
//   CREATE TABLE [IF NOT EXISTS] t (c type [NULL | NOT NULL | PRIMARY KEY
//     | UNIQUE], ...)    an empty table; the types the engine reads in a
//     CAST (INTEGER, BIGINT, DECIMAL(p,s), DOUBLE, VARCHAR, DATE,
//     TIMESTAMP, BOOLEAN; SMALLINT and REAL are INTEGER and DOUBLE).
//     Constraints are accepted and not enforced.
//   CREATE TABLE t AS SELECT ...   the query's result, its column names
//     and types.
//   INSERT INTO t [(c, ...)] VALUES (...), ... | SELECT ...   each value
//     cast to its column's type (PostgreSQL's assignment: '5' into an
//     INTEGER is 5; text that does not convert is 22P02), columns not named
//     NULL; VALUES rows are evaluated one at a time (a row may hold any
//     expression without columns: 1 + 2, NULL, -(3), CAST(...)).
//   DROP TABLE [IF EXISTS] t [, ...]
// The rows are copied, value by value, into buffers of the engine's table
// pool (accounted there until the table is dropped): meant for tables of
// thousands of rows, not millions. A statement planned before an INSERT
// keeps the rows it saw. Statements return no columns and no rows.
// Errors: KeyError 42P01 (unknown table), Invalid 42P07 (a table that
// exists), 42601 (more values than columns), 42703 (an unknown column),
// 22P02 / 22003 / 22007 (a value that does not convert); NotImplemented
// 0A000 for other forms (ON CONFLICT, RETURNING, DEFAULT, temporary or
// partitioned tables, a type the engine cannot hold).
// Thread safety: one statement at a time per table (the catalog's own
// operations are thread-safe; two INSERTs into one table both land).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/sql/catalog.h"
#include "quiver/sql/expression/vector.h"

namespace quiver::sql {

struct CatalogWriteContext {
  Catalog* catalog = nullptr;
  /// Where the tables' buffers live.
  MemoryPool* table_pool = nullptr;
  /// Binds and runs one SelectStmt node of the statement, returning its
  /// batches (charged to the statement) and result schema.
  std::function<Result<std::vector<RecordBatchPtr>>(nlohmann::json& select, SchemaPtr* schema)> run_query;
  /// A NotImplemented 0A000 status naming `construct` at byte `location`.
  std::function<Status(const std::string& construct, int location)> unsupported;
  /// "line L, column C" of byte `location` (messages).
  std::function<std::string(int location)> where;
};

/// Whether `statement_key` (the parse tree's statement node name) is one of
/// the statements above.
bool IsCatalogWrite(const std::string& statement_key);

/// Runs the statement `stmt` (the node under `statement_key`) at byte
/// `location` of its text. Errors: above.
Status ExecuteCatalogWrite(const std::string& statement_key, nlohmann::json& stmt, int location,
                           const CatalogWriteContext& ctx);

/// An array of `type` (a canonical type, or the null type) holding
/// `values` (each of that type, or NULL), from `pool`. Errors: OutOfMemory;
/// NotImplemented for a type without a builder.
Result<ArrayDataPtr> ArrayFromValues(const DataTypePtr& type, const std::vector<Value>& values, MemoryPool* pool);

}  // namespace quiver::sql
