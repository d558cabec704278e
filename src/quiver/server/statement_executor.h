// quiver/server/statement_executor.h — what the result server runs
// statements through. The SQL layer (quiver::sql::Engine) plugs in behind
// this interface; until then TableExecutor answers `SELECT * FROM <table>`
// (optionally `LIMIT n`) over registered Arrow IPC files.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "quiver/base/result.h"
#include "quiver/columnar/record_batch_stream.h"
#include "quiver/memory/memory_pool.h"
#include "quiver/sql/dialect.h"

namespace quiver::server {

/// A table the executor can read, for GetTables / GetColumns.
struct TableInfo {
  std::string name;
  SchemaPtr schema;
};

/// What a statement's session contributes to running it (ExecuteStatement
/// passes its session's; docs/server.md, "Dialect").
struct StatementSession {
  /// The dialect the statement is read in (sql/dialect.h).
  sql::SqlDialect dialect = sql::SqlDialect::kSpark;
  /// Called, on the thread running Execute, with the dialect of a
  /// `SET dialect = ...` statement for the session to keep; null (a
  /// shared-store session, whose dialect is fixed at OpenSession): such a
  /// SET fails with NotImplemented (SQLSTATE 0A000).
  std::function<void(sql::SqlDialect)> set_dialect;
};

class StatementExecutor {
 public:
  virtual ~StatementExecutor() = default;
  /// Execute below, in the session `session`. The default ignores the
  /// session (executors without dialects, such as TableExecutor).
  virtual Result<std::unique_ptr<RecordBatchStream>> Execute(std::string_view statement,
                                                             const StatementSession& session,
                                                             const std::atomic<bool>* cancel, MemoryPool* pool) {
    (void)session;
    return Execute(statement, cancel, pool);
  }
  /// Starts `statement` and returns its result as a stream. `cancel` (not
  /// null, outlives the stream) is polled by the producer: once true, Next()
  /// returns Cancelled. Every buffer of the result is charged to `pool`
  /// (outlives the stream and its batches). Errors: Invalid (syntax),
  /// NotImplemented naming the unsupported construct, KeyError naming an
  /// unknown table, IOError from storage. Thread safety: Execute may be
  /// called from several threads at once; each stream is used by one.
  virtual Result<std::unique_ptr<RecordBatchStream>> Execute(std::string_view statement,
                                                             const std::atomic<bool>* cancel, MemoryPool* pool) = 0;
  /// The tables statements can name, sorted by name. Thread-safe.
  virtual std::vector<TableInfo> ListTables() const = 0;
};

/// Answers `SELECT * FROM <name> [LIMIT <n>] [;]` (keywords in any case,
/// names as registered, or quoted with backticks or double quotes) over
/// tables registered by path; each Execute opens the file anew (memory
/// mapped, so concurrent statements share the page cache, not the pool).
class TableExecutor : public StatementExecutor {
 public:
  /// Registers `name` (1..128 of [A-Za-z0-9_]) for the IPC file or stream at
  /// `path`, reading its schema now. Errors: Invalid for a bad or duplicate
  /// name, IOError / Invalid from opening the file.
  Status AddTable(const std::string& name, const std::string& path, MemoryPool* pool);

  using StatementExecutor::Execute;
  Result<std::unique_ptr<RecordBatchStream>> Execute(std::string_view statement, const std::atomic<bool>* cancel,
                                                     MemoryPool* pool) override;
  std::vector<TableInfo> ListTables() const override;

 private:
  struct Entry {
    std::string path;
    SchemaPtr schema;
  };
  std::map<std::string, Entry> tables_;  // fixed after startup: reads need no lock
};

/// Parses "NAME=PATH" (the --table option). Invalid names the problem.
Result<std::pair<std::string, std::string>> ParseTableSpec(std::string_view spec);

}  // namespace quiver::server
