// quiver/server/sql_executor.cc
#include "quiver/server/sql_executor.h"

namespace quiver::server {

SqlExecutor::SqlExecutor(std::shared_ptr<sql::Catalog> catalog, SqlExecutorOptions options)
    : catalog_(catalog), engine_(std::move(catalog)), options_(options) {}

Result<std::unique_ptr<SqlExecutor>> SqlExecutor::Make(std::shared_ptr<sql::Catalog> catalog,
                                                       SqlExecutorOptions options) {
  if (!catalog) return Status::Invalid("SqlExecutor: catalog is required");
  if (options.max_batch_rows <= 0) return Status::Invalid("SqlExecutor: max_batch_rows must be positive");
  if (options.threads < 0) return Status::Invalid("SqlExecutor: threads must be >= 0");
  if (options.statement_spill_limit_bytes < -1) {
    return Status::Invalid("SqlExecutor: statement_spill_limit_bytes must be >= 0 or -1 (none)");
  }
  if (options.planning_timeout_ms < 0) return Status::Invalid("SqlExecutor: planning_timeout_ms must be >= 0");
  if (options.statement_memory_limit_bytes < -1 || options.statement_memory_limit_bytes == 0) {
    return Status::Invalid("SqlExecutor: statement_memory_limit_bytes must be positive or -1 (none)");
  }
  return std::unique_ptr<SqlExecutor>(new SqlExecutor(std::move(catalog), options));
}

Result<std::unique_ptr<RecordBatchStream>> SqlExecutor::Execute(std::string_view statement,
                                                                const std::atomic<bool>* cancel, MemoryPool* pool) {
  return Execute(statement, StatementSession{sql::SqlDialect::kPostgres, nullptr}, cancel, pool);
}

Result<std::unique_ptr<RecordBatchStream>> SqlExecutor::Execute(std::string_view statement,
                                                                const StatementSession& session,
                                                                const std::atomic<bool>* cancel, MemoryPool* pool) {
  if (pool == nullptr) return Status::Invalid("SqlExecutor: pool is required");
  sql::ExecuteOptions eo;
  eo.pool = pool;
  eo.memory_mode = options_.memory_mode;
  eo.memory_limit_bytes = options_.statement_memory_limit_bytes;
  eo.max_batch_rows = options_.max_batch_rows;
  eo.threads = options_.threads;
  eo.spill = options_.spill;
  eo.spill_directory = options_.spill_directory;
  if (options_.disk_budget || options_.statement_spill_limit_bytes >= 0) {
    DiskBudgetOptions d;
    d.name = "the statement's spill files";
    d.limit_bytes = options_.statement_spill_limit_bytes;
    d.limit_name = "--statement-spill-limit";
    QUIVER_ASSIGN_OR_RETURN(eo.disk_budget, DiskBudget::Make(d, options_.disk_budget));
  }
  eo.file_tables = options_.allow_file_tables;
  eo.s3_files = options_.s3_files;
  eo.dialect = session.dialect;
  eo.set_dialect = session.set_dialect;
  eo.planning_timeout_ms = options_.planning_timeout_ms;
  if (cancel != nullptr) {
    // Non-owning alias: the interface guarantees `cancel` outlives the
    // stream, and the engine only loads the flag.
    eo.cancel = std::shared_ptr<std::atomic<bool>>(std::shared_ptr<void>(), const_cast<std::atomic<bool>*>(cancel));
  }
  return engine_.Execute(statement, eo);
}

std::vector<TableInfo> SqlExecutor::ListTables() const {
  std::vector<TableInfo> out;
  for (const auto& t : catalog_->ListTables()) out.push_back(TableInfo{t.name, t.schema});
  return out;
}

}  // namespace quiver::server
