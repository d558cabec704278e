// quiver bench serve: the options of the loopback TLS download benchmark of
// quiver serve's CloudFetch chunks (quiver/bench/serve_bench.h), which runs
// it; its report on stdout.
#include <cstdio>
#include <memory>
#include <string>

#include "quiver/bench/serve_bench.h"
#include "quiver/cli.h"

namespace quiver::cli {

void AddBenchServe(CLI::App* bench, Context& ctx, Action* action) {
  auto* cmd = bench->add_subcommand(
      "serve", "loopback TLS download throughput of quiver serve's CloudFetch chunks (curl --parallel)");
  struct Opts {
    bench::ServeBenchOptions bench;
    bool no_lz4 = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--rows", o->bench.rows, "lineitem rows (default 1000000 ~ 170 MiB of IPC; 6500000 for > 1 GiB)");
  cmd->add_option("--clients", o->bench.clients, "concurrent clients fetching the whole result (default 4)");
  cmd->add_option("--chunk-bytes", o->bench.chunk_bytes, "target IPC bytes per chunk (default 20MiB)")
      ->transform(ByteSize());
  cmd->add_option("--parallel", o->bench.parallel, "curl --parallel-max (default 10, like the Databricks drivers)");
  cmd->add_option("--curl", o->bench.curl, "curl binary (default: curl from PATH)");
  cmd->add_flag("--no-lz4", o->no_lz4, "serve raw IPC chunks");
  cmd->callback([&ctx, o, action] {
    *action = [&ctx, o]() -> Status {
      bench::ServeBenchOptions bo = o->bench;
      bo.lz4 = !o->no_lz4;
      QUIVER_ASSIGN_OR_RETURN(const bench::ServeBenchResult result, bench::RunServeBench(bo, ctx.root));
      std::fputs(bench::ServeBenchReport(result).c_str(), stdout);
      return Status::OK();
    };
  });
}

}  // namespace quiver::cli
