// quiver/server/sql_executor.h — the result server's StatementExecutor over
// the SQL layer: statements run on quiver::sql::Engine against the tables
// of a shared quiver::sql::Catalog (see quiver/sql/engine.h for the SQL
// accepted and its error messages).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "quiver/join/task_memory_manager.h"
#include "quiver/server/statement_executor.h"
#include "quiver/sql/catalog.h"
#include "quiver/sql/engine.h"

namespace quiver::server {

struct SqlExecutorOptions {
  /// Where each statement's join relations live (sql::ExecuteOptions).
  join::MemoryMode memory_mode = join::MemoryMode::kOnHeap;
  /// Byte limit of each statement's pool ("sql-statement", a child of the
  /// pool given to Execute); -1 = none. Exceeding it fails that statement
  /// with OutOfMemory (the client sees an ERROR status), nothing else.
  int64_t statement_memory_limit_bytes = -1;
  /// Largest number of rows in one join output batch (> 0).
  int64_t max_batch_rows = 64 * 1024;
  /// Workers per pipeline of each statement (sql::ExecuteOptions::threads:
  /// 0 = the machine's hardware threads). Every statement of the server
  /// shares one worker pool (the process-wide sql::TaskScheduler), so N
  /// concurrent statements share the cores; a cancelled or timed-out
  /// statement stops its workers within a morsel.
  int threads = 0;
  /// Spilling past the statement's limit (sql::ExecuteOptions::spill) and
  /// where its files go ("" = $TMPDIR or /tmp).
  bool spill = true;
  std::string spill_directory;
  /// The server's disk budget (memory/disk_budget.h), shared with the
  /// chunk store: each statement's spill files are charged to a child of
  /// it with statement_spill_limit_bytes (-1 = no limit of its own; the
  /// server's applies). Past either limit the statement fails with 53100
  /// naming it and its spill files go. Null: only the statement's limit.
  std::shared_ptr<DiskBudget> disk_budget;
  int64_t statement_spill_limit_bytes = -1;
  /// File tables in SQL (`FROM 'x.parquet'`, read_parquet, read_csv:
  /// sql::ExecuteOptions::file_tables). Off by default: they would let any
  /// client read any file the server's user can read.
  bool allow_file_tables = false;
  /// Where s3:// paths of file tables are read (sql::ExecuteOptions::s3_files).
  std::shared_ptr<formats::S3Files> s3_files;
  /// Time allowed to parse, bind and plan one statement (ms; 0 = none):
  /// past it the statement fails with SQLSTATE 57014 naming the limit
  /// (sql::ExecuteOptions::planning_timeout_ms). On by default: planning
  /// runs before the statement time limit can see it.
  int64_t planning_timeout_ms = 30'000;
};

class SqlExecutor : public StatementExecutor {
 public:
  /// `catalog` is shared (tables registered later are visible to later
  /// statements). Errors: Invalid for a null catalog or bad options.
  static Result<std::unique_ptr<SqlExecutor>> Make(std::shared_ptr<sql::Catalog> catalog,
                                                   SqlExecutorOptions options = {});

  /// Plans `statement` with sql::Engine::Execute. The statement's pool is a
  /// child of `pool`; `cancel` (outlives the stream, per the interface) is
  /// the engine's cancel flag, so setting it stops the statement at its next
  /// batch boundary and releases its operators. Errors: the engine's
  /// (Invalid, KeyError, NotImplemented with the position in the text).
  /// In the postgres dialect (SqlExecutorOptions has no session).
  Result<std::unique_ptr<RecordBatchStream>> Execute(std::string_view statement, const std::atomic<bool>* cancel,
                                                     MemoryPool* pool) override;
  /// Reads `statement` in `session.dialect`; `SET dialect = ...` (also
  /// `SET quiver.dialect`) calls `session.set_dialect` and returns no rows
  /// (0A000 when it is null; 22023 for an unknown dialect name).
  Result<std::unique_ptr<RecordBatchStream>> Execute(std::string_view statement, const StatementSession& session,
                                                     const std::atomic<bool>* cancel, MemoryPool* pool) override;
  /// The catalog's tables, sorted by name (GetTables / GetColumns use the
  /// schemas).
  std::vector<TableInfo> ListTables() const override;

  const std::shared_ptr<sql::Catalog>& catalog() const { return catalog_; }
  const SqlExecutorOptions& options() const { return options_; }

 private:
  SqlExecutor(std::shared_ptr<sql::Catalog> catalog, SqlExecutorOptions options);
  std::shared_ptr<sql::Catalog> catalog_;
  sql::Engine engine_;
  SqlExecutorOptions options_;
};

}  // namespace quiver::server
