// quiver bench tpch / bench tpcds: a query suite in process, quiver vs
// DuckDB, side by side (quiver/bench/query_bench.h), over Arrow IPC or
// Parquet tables (--format).
#include "quiver/bench/tpcds_bench.h"
#include "quiver/bench/tpch_bench.h"
#include "quiver/cli.h"

namespace quiver::cli {
namespace {

/// The options every query suite takes, into `o` (and `memory_mode`, parsed
/// when the command runs).
void AddQueryBenchOptions(CLI::App* cmd, const char* suite, bench::QueryBenchOptions* o, std::string* memory_mode) {
  o->duckdb_script = std::string(QUIVER_BENCH_DIR) + "/tpch_duckdb.mjs";
  cmd->add_option("--rounds", o->rounds, "measured rounds per query (default 3)")->check(CLI::Range(1, 100));
  cmd->add_option("--threads", o->threads,
                  "comma-separated thread counts, each run by quiver and DuckDB side by side (default 1; e.g. 1,2)");
  cmd->add_option("--memory-mode", *memory_mode, "on-heap|off-heap (default on-heap)");
  cmd->add_option("--duckdb-script", o->duckdb_script, "path of bench/tpch_duckdb.mjs");
  cmd->add_option("--statement-memory-limit", o->memory_limit_bytes,
                  "quiver's statement memory limit (e.g. 64MiB; past it operators spill; default none)")
      ->transform(ByteSize());
  cmd->add_option("--format", o->table_format,
                  std::string("the tables both engines read: arrow (quiver the generated IPC files, DuckDB its own "
                              "tables loaded before the timing; default) or parquet (") +
                      suite + "'s tables as Parquet files that both scan in place in every round)")
      ->check(CLI::IsMember({"arrow", "parquet"}));
  cmd->add_option("--parquet-codec", o->parquet_codec, "--format parquet: snappy|zstd|none (default snappy)");
  cmd->add_option("--parquet-writer", o->parquet_writer,
                  "--format parquet: who writes the files, duckdb (COPY ... FORMAT parquet; default) or quiver")
      ->check(CLI::IsMember({"duckdb", "quiver"}));
  cmd->add_option("--parquet-row-group-rows", o->parquet_row_group_rows,
                  "--format parquet: rows per row group (default 122880)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_flag("--no-duckdb", o->no_duckdb, "quiver's side only");
  cmd->add_flag_callback(
      "--no-join-filters", [o] { o->join_filters = false; },
      "quiver without join filter pushdown (a hash join's build keys filtering its probe side's scan)");
  cmd->add_flag("--json", o->json, "one JSON object per query");
}

}  // namespace

void AddBenchTpch(CLI::App* bench, Context& ctx, Action* action) {
  auto* cmd = bench->add_subcommand("tpch", "the 22 TPC-H queries in process: quiver vs DuckDB, side by side");
  struct Opts {
    bench::TpchBenchOptions o;
    std::string memory_mode = "on-heap";
  };
  auto opts = std::make_shared<Opts>();
  cmd->add_option("--scale", opts->o.scale, "TPC-H scale factor (default 1)")->check(CLI::Range(0.0001, 100.0));
  cmd->add_option("--queries", opts->o.queries, "comma-separated query numbers (default all 22)");
  AddQueryBenchOptions(cmd, "TPC-H", &opts->o, &opts->memory_mode);
  cmd->callback([&ctx, opts, action] {
    *action = [&ctx, opts]() -> Status {
      QUIVER_ASSIGN_OR_RETURN(opts->o.memory_mode, join::ParseMemoryMode(opts->memory_mode));
      return bench::RunTpchBench(opts->o, ctx.Child("bench"), stdout);
    };
  });
}

void AddBenchTpcds(CLI::App* bench, Context& ctx, Action* action) {
  auto* cmd = bench->add_subcommand("tpcds", "the 99 TPC-DS queries in process: quiver vs DuckDB, side by side");
  struct Opts {
    bench::TpcdsBenchOptions o;
    std::string memory_mode = "on-heap";
  };
  auto opts = std::make_shared<Opts>();
  opts->o.queries_dir = std::string(QUIVER_BENCH_DIR) + "/../tests/tpcds/queries";
  cmd->add_option("--scale", opts->o.scale, "TPC-DS scale factor (default 1)")->check(CLI::Range(0.0001, 100.0));
  cmd->add_option("--queries", opts->o.queries, "comma-separated query numbers (default all 99)");
  cmd->add_option("--queries-dir", opts->o.queries_dir, "folder of the query texts NN.sql (tests/tpcds/queries)");
  AddQueryBenchOptions(cmd, "TPC-DS", &opts->o, &opts->memory_mode);
  cmd->callback([&ctx, opts, action] {
    *action = [&ctx, opts]() -> Status {
      QUIVER_ASSIGN_OR_RETURN(opts->o.memory_mode, join::ParseMemoryMode(opts->memory_mode));
      return bench::RunTpcdsBench(opts->o, ctx.Child("bench"), stdout);
    };
  });
}

}  // namespace quiver::cli
