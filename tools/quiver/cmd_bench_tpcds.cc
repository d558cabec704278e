// quiver bench tpcds: the 99 TPC-DS queries in process, quiver vs DuckDB,
// side by side (quiver/bench/tpcds_bench.h).
#include "quiver/bench/tpcds_bench.h"
#include "quiver/cli.h"

namespace quiver::cli {

void AddBenchTpcds(CLI::App* bench, Context& ctx, Action* action) {
  auto* cmd = bench->add_subcommand("tpcds", "the 99 TPC-DS queries in process: quiver vs DuckDB, side by side");
  struct Opts {
    bench::TpcdsBenchOptions o;
    std::string memory_mode = "on-heap";
  };
  auto opts = std::make_shared<Opts>();
  opts->o.duckdb_script = std::string(QUIVER_BENCH_DIR) + "/tpch_duckdb.mjs";
  opts->o.queries_dir = std::string(QUIVER_BENCH_DIR) + "/../tests/tpcds/queries";
  cmd->add_option("--scale", opts->o.scale, "TPC-DS scale factor (default 1)")->check(CLI::Range(0.0001, 100.0));
  cmd->add_option("--rounds", opts->o.rounds, "measured rounds per query (default 3)")->check(CLI::Range(1, 100));
  cmd->add_option("--threads", opts->o.threads,
                  "comma-separated thread counts, each run by quiver and DuckDB side by side (default 1; e.g. 1,2)");
  cmd->add_option("--queries", opts->o.queries, "comma-separated query numbers (default all 99)");
  cmd->add_option("--queries-dir", opts->o.queries_dir, "folder of the query texts NN.sql (tests/tpcds/queries)");
  cmd->add_option("--memory-mode", opts->memory_mode, "on-heap|off-heap (default on-heap)");
  cmd->add_option("--duckdb-script", opts->o.duckdb_script, "path of bench/tpch_duckdb.mjs");
  cmd->add_option("--statement-memory-limit", opts->o.memory_limit_bytes,
                  "quiver's statement memory limit (e.g. 64MiB; past it operators spill; default none)")
      ->transform(ByteSize());
  cmd->add_flag("--no-duckdb", opts->o.no_duckdb, "quiver's side only");
  cmd->add_flag("--json", opts->o.json, "one JSON object per query");
  cmd->callback([&ctx, opts, action] {
    *action = [&ctx, opts]() -> Status {
      QUIVER_ASSIGN_OR_RETURN(opts->o.memory_mode, join::ParseMemoryMode(opts->memory_mode));
      return bench::RunTpcdsBench(opts->o, ctx.Child("bench"), stdout);
    };
  });
}

}  // namespace quiver::cli
