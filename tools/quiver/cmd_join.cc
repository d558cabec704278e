// quiver join: the options of a hash join of two Arrow IPC inputs
// (quiver/job/file_join.h, which runs it and reports rows, times and memory).
// quiver bench join: the options of the join benchmark
// (quiver/bench/join_bench.h), which runs it.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "quiver/bench/join_bench.h"
#include "quiver/cli.h"
#include "quiver/compression/codec.h"
#include "quiver/job/file_join.h"
#include "quiver/join/hash_join.h"
#include "quiver/join/task_memory_manager.h"

#ifndef QUIVER_BENCH_DIR
#define QUIVER_BENCH_DIR "bench"
#endif

namespace quiver::cli {
namespace {

void AddJoinCommand(CLI::App& app, Context& ctx, Action* action) {
  auto* cmd = app.add_subcommand("join", "hash join of two Arrow IPC inputs (build side in a hashed relation)");
  auto o = std::make_shared<job::FileJoinOptions>();
  auto format = std::make_shared<std::string>("stream");
  cmd->add_option("--build", o->build_path, "build side (right input): Arrow IPC file or stream ('-' = stdin)")
      ->required();
  cmd->add_option("--probe", o->probe_path, "probe side (left input): Arrow IPC file or stream ('-' = stdin)")
      ->required();
  cmd->add_option("--on", o->on, "key columns BUILD_COL=PROBE_COL[,...]")->required();
  cmd->add_option("--type", o->type, "inner|left|right|full|semi|anti|null-aware-anti (default inner)")
      ->check(ParsedBy(join::ParseJoinType, "TYPE"));
  cmd->add_option("--memory-mode", o->memory_mode, "on-heap|off-heap: where the relation's pages come from")
      ->check(ParsedBy(join::ParseMemoryMode, "MODE"));
  cmd->add_option("--memory-limit", o->memory_limit_bytes, "byte limit of the join's memory (relation and output)")
      ->transform(ByteSize());
  cmd->add_option("-o,--output", o->output_path, "output path ('-' = stdout, the default)");
  cmd->add_option("--compression", o->compression, "output body compression none|lz4|zstd")
      ->check(ParsedBy(ParseCompressionType, "CODEC"));
  cmd->add_option("--format", *format, "output IPC format stream|file")->check(CLI::IsMember({"stream", "file"}));
  cmd->add_option("--max-rows-per-batch", o->max_output_rows, "output batch bound in rows (default 65536)");
  cmd->add_option("--max-bytes-per-batch", o->max_output_bytes, "output batch bound in bytes (default 16MiB)")
      ->transform(ByteSize());
  cmd->add_flag("--huge-pages", o->huge_pages, "advise transparent huge pages for off-heap pages");
  cmd->add_flag("--prefault", o->prefault, "fault relation pages in when they are acquired");
  cmd->callback([&ctx, o, format, action] {
    *action = [&ctx, o, format]() -> Status {
      o->file_format = *format == "file";
      QUIVER_ASSIGN_OR_RETURN(const job::FileJoinResult r, job::RunFileJoin(*o, ctx.root));
      std::fputs(job::FormatFileJoinReport(r).c_str(), stderr);
      return Status::OK();
    };
  });
}

void AddBenchJoinCommand(CLI::App* bench, Context& ctx, Action* action, int* exit_code) {
  auto* cmd = bench->add_subcommand("join", "hashed relation build/probe and hash joins, side by side with DuckDB");
  struct Opts {
    std::string scale = "small", duckdb_script = std::string(QUIVER_BENCH_DIR) + "/duckdb_join.mjs";
    bool json = false, no_duckdb = false, require_duckdb = false, skip_micro = false, verbose = false;
    int rounds = 0, threads = 1;
    std::vector<std::string> cases;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--scale", o->scale,
                  "small (tests: 50K/200K keys, 200K x 400K joins) or full (500K/10M keys, "
                  "10M x 20M joins)")
      ->check(CLI::IsMember({"small", "full"}));
  cmd->add_flag("--json", o->json, "one JSON object per case and line");
  cmd->add_option("--rounds", o->rounds, "measured rounds per case (default: small 1, full 3); medians")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--case", o->cases, "only these join cases: dense, sparse, dup30 (repeatable)");
  cmd->add_flag("--no-duckdb", o->no_duckdb, "skip the DuckDB side");
  cmd->add_flag("--require-duckdb", o->require_duckdb, "fail when the DuckDB side cannot run");
  cmd->add_flag("--skip-micro", o->skip_micro, "skip the relation micro-benchmarks");
  cmd->add_option("--duckdb-script", o->duckdb_script, "path of duckdb_join.mjs");
  cmd->add_flag("--verbose", o->verbose, "per-round build/prefault/probe times on stderr");
  cmd->add_option("--threads", o->threads,
                  "threads of both engines in the joins (quiver: the probe side split across them over one "
                  "relation built on one thread; default 1)")
      ->check(CLI::Range(1, 256));
  cmd->callback([&ctx, o, action, exit_code] {
    *action = [&ctx, o, exit_code]() -> Status {
      (void)exit_code;
      bench::JoinBenchOptions bo;
      bo.full = o->scale == "full";
      bo.rounds = o->rounds;
      bo.json = o->json;
      bo.cases = o->cases;
      bo.no_duckdb = o->no_duckdb;
      bo.require_duckdb = o->require_duckdb;
      bo.skip_micro = o->skip_micro;
      bo.verbose = o->verbose;
      bo.duckdb_script = o->duckdb_script;
      bo.threads = o->threads;
      return bench::RunJoinBench(bo, ctx.root, stdout);
    };
  });
}

}  // namespace

void AddJoin(CLI::App& app, Context& ctx, Action* action, int* exit_code) {
  AddJoinCommand(app, ctx, action);
  CLI::App* bench = nullptr;
  try {
    bench = app.get_subcommand("bench");
  } catch (const CLI::Error&) {
    bench = nullptr;
  }
  if (bench != nullptr) AddBenchJoinCommand(bench, ctx, action, exit_code);
}

}  // namespace quiver::cli
