// quiver sql: run one SQL statement in-process over Arrow IPC tables
// (--table NAME=PATH) and/or generated TPC-H tables (--tpch SCALE), and
// print the result as a pipe-separated text table, CSV or JSON lines.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "quiver/bench/measure.h"
#include "quiver/cli.h"
#include "quiver/sql/engine.h"
#include "quiver/sql/tpch_queries.h"
#include "quiver/sql/tpch_tables.h"
#include "table_catalog.h"

namespace quiver::cli {

void AddSql(CLI::App& app, Context& ctx, Action* action) {
  auto* cmd = app.add_subcommand("sql", "run one SQL statement over Arrow IPC tables or generated TPC-H tables");
  struct Opts {
    std::vector<std::string> tables;
    double tpch = 0;
    std::string tpch_dir, sql, format = "table", memory_mode = "on-heap";
    int64_t statement_limit = -1;
    int tpch_query = 0;
    bool print_sql = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("SQL", o->sql, "the statement (SELECT ..., SHOW TABLES, DESCRIBE t)");
  cmd->add_option("--tpch-query", o->tpch_query, "run TPC-H query N (1..22, validation parameters) instead of SQL")
      ->check(CLI::Range(1, sql::kNumTpchQueries));
  cmd->add_flag("--print-sql", o->print_sql, "print the statement (e.g. of --tpch-query) and exit");
  // One value per --table (CLI11 lets a vector option swallow the SQL text otherwise).
  cmd->add_option("--table", o->tables, "NAME=PATH: an IPC file, stream or directory of IPC files (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--tpch", o->tpch, "also generate the TPC-H tables at this scale factor (e.g. 0.01)");
  cmd->add_option("--tpch-dir", o->tpch_dir,
                  "where to write the TPC-H files (default: a temporary directory, removed)");
  cmd->add_option("--format", o->format, "table|csv|jsonl (default table)")
      ->check(CLI::IsMember({"table", "csv", "jsonl"}));
  cmd->add_option("--memory-mode", o->memory_mode, "join relations on-heap|off-heap (default on-heap)");
  cmd->add_option("--statement-memory-limit", o->statement_limit, "byte limit of the statement's pool (default none)");
  cmd->callback([&ctx, o, action] {
    if (o->tpch_query > 0) o->sql = std::string(sql::TpchQueries()[o->tpch_query - 1].sql);
    if (o->sql.empty()) throw CLI::RequiredError("SQL (or --tpch-query)");
    *action = [&ctx, o]() -> Status {
      if (o->print_sql) {
        std::printf("%s\n", o->sql.c_str());
        return Status::OK();
      }
      QUIVER_ASSIGN_OR_RETURN(join::MemoryMode mode, join::ParseMemoryMode(o->memory_mode));
      QUIVER_ASSIGN_OR_RETURN(auto tables, OpenTableCatalog(ctx, o->tables, o->tpch, o->tpch_dir, "quiver-tpch-"));
      if (!tables->tpch_summary.empty()) std::fprintf(stderr, "%s\n", tables->tpch_summary.c_str());
      const std::shared_ptr<sql::Catalog>& catalog = tables->catalog;
      sql::Engine engine(catalog);
      auto pool = ctx.Child("sql");
      auto peaks = std::make_shared<bench::PeakByPath>();  // the statement's operators, by pool
      pool->AddListener(peaks);
      sql::ExecuteOptions eo;
      eo.pool = pool.get();
      eo.memory_mode = mode;
      eo.memory_limit_bytes = o->statement_limit;
      QUIVER_ASSIGN_OR_RETURN(auto stream, engine.Execute(o->sql, eo));
      // --format table is the pipe-separated table (names once, unpadded, NULL).
      QUIVER_ASSIGN_OR_RETURN(const RowTextFormat format,
                              ParseRowTextFormat(o->format == "table" ? "pipe" : o->format));
      RowTextWriter text(format, stdout);
      text.WriteHeader(*stream->schema());
      int64_t rows = 0;
      while (true) {
        QUIVER_ASSIGN_OR_RETURN(RecordBatchPtr b, stream->Next());
        if (!b) break;
        text.WriteRows(*b);
        rows += b->num_rows;
      }
      std::fflush(stdout);
      std::string by_operator;
      for (const char* op : {"scan", "build", "probe", "aggregate", "sort"}) {
        const int64_t p = peaks->Peak(std::string("/sql-statement/") + op);
        if (p > 0) by_operator += std::string(by_operator.empty() ? "" : ", ") + op + " " + FormatBytes(p);
      }
      std::fprintf(stderr, "%lld rows; statement pool peak %s (%s)\n", static_cast<long long>(rows),
                   FormatBytes(pool->peak_bytes()).c_str(),
                   by_operator.empty() ? "nothing allocated" : by_operator.c_str());
      return Status::OK();
    };
  });
}

}  // namespace quiver::cli
