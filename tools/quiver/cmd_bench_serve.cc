// quiver bench serve: the options of `quiver serve` measured from outside,
// one server per allocator side by side (quiver/bench/serve_bench.h), which
// runs it; its report on stdout, --check failures as a non-zero exit.
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include "quiver/bench/serve_bench.h"
#include "quiver/cli.h"

namespace quiver::cli {

void AddBenchServe(CLI::App* bench, Context& ctx, Action* action) {
  auto* cmd = bench->add_subcommand(
      "serve",
      "quiver serve measured from outside, per allocator: 5-row query latency, RSS after a burst of large "
      "statements, loopback TLS download MB/s and server CPU per GB (curl --parallel), idle and slow connections "
      "held and their memory");
  struct Opts {
    bench::ServeBenchOptions bench;
    std::string allocators;
    bool no_lz4 = false;
    bool json = false;
    std::string server_exe;
  };
  auto o = std::make_shared<Opts>();
  bench::ServeBenchOptions& b = o->bench;
  cmd->add_option("--allocators", o->allocators,
                  "comma-separated allocators to serve with, one server each (default: every one this build "
                  "offers: system,jemalloc,mimalloc,mmap)");
  cmd->add_option("--rows", b.rows, "lineitem rows (default 1000000 ~ 170 MiB of IPC)")->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--chunk-bytes", b.chunk_bytes, "target IPC bytes per chunk (default 20MiB)")->transform(ByteSize());
  cmd->add_flag("--no-lz4", o->no_lz4, "serve raw IPC chunks");
  cmd->add_option("--runs", b.runs, "5-row query runs per median (default 30)")->check(CLI::Range(1, 100000));
  cmd->add_option("--burst", b.burst, "large statements at once after the first (default 12)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--clients", b.clients, "large statements whose links curl downloads at once (default 4)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--parallel", b.parallel, "curl --parallel-max (default 10, like the Databricks drivers)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--curl", b.curl, "curl program (default: curl from PATH)");
  cmd->add_option("--idle-tcp", b.idle_tcp, "idle TCP connections held (default 256)")->check(CLI::Range(0, 100000));
  cmd->add_option("--slow-tls", b.slow_tls, "TLS clients held after one header byte (default 64)")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--window", b.window_bytes, "download window of each large statement's client (default 32MiB)")
      ->transform(ByteSize());
  cmd->add_option("--settle-s", b.settle_seconds,
                  "seconds to wait after statements end before reading the server's RSS (default 2.5)")
      ->check(CLI::Range(0.0, 600.0));
  cmd->add_option("--server-exe", o->server_exe,
                  "quiver executable to start as the server (default: this one; another build's to compare builds)");
  cmd->add_flag("--json", o->json, "one JSON object per allocator instead of the table");
  cmd->add_flag("--check", b.check,
                "check rows, idle connections all held, the 5-row query answering meanwhile; non-zero exit on failure");
  cmd->callback([&ctx, o, action] {
    *action = [&ctx, o]() -> Status {
      bench::ServeBenchOptions bo = o->bench;
      bo.lz4 = !o->no_lz4;
      bo.quiver_path = o->server_exe.empty() ? SelfExecutable() : o->server_exe;
      std::stringstream list(o->allocators);
      for (std::string a; std::getline(list, a, ',');) {
        if (!a.empty()) bo.allocators.push_back(a);
      }
      QUIVER_ASSIGN_OR_RETURN(const bench::ServeBenchResult r, bench::RunServeBench(bo, ctx.root, stderr));
      std::fputs(bench::ServeBenchReport(r, o->json).c_str(), stdout);
      std::fflush(stdout);
      if (!bo.check) return Status::OK();
      return CheckResult("bench serve", r.failures, std::to_string(r.servers.size()) + " servers");
    };
  });
}

}  // namespace quiver::cli
