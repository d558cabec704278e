// quiver bench fetch: the options of the fetch path's side-by-side
// benchmark (quiver/bench/fetch_bench.h), which runs it; its report on
// stdout, --check failures as a non-zero exit. The hidden `bench
// fetch-client` is one measured fetch in a fresh process (its JSON line on
// stdout), started by the benchmark.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "quiver/bench/fetch_bench.h"
#include "quiver/cli.h"

namespace quiver::cli {

void AddBenchFetch(CLI::App* bench, Context& ctx, Action* action) {
  auto* cmd = bench->add_subcommand(
      "fetch", "fetch path side by side: policies, curl --parallel, the Node @databricks/sql client");
  struct Opts {
    bench::FetchBenchOptions bench;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  bench::FetchBenchOptions& b = o->bench;
  cmd->add_option("--scale", b.scale_gib, "decoded GiB of the generated result (default 1.5)");
  cmd->add_option("--chunk-bytes", b.chunk_bytes, "uncompressed bytes per served chunk (default 20MiB)")
      ->transform(ByteSize());
  cmd->add_option("--window", b.window, "download window of every quiver case (default 256MiB)")->transform(ByteSize());
  cmd->add_option("--parallel", b.parallel, "parallel downloads of quiver and curl (default 8)");
  cmd->add_flag(
      "--no-lz4-checksums", [o](std::int64_t) { o->bench.verify_lz4_checksums = false; },
      "every quiver case skips the LZ4 frames' checksums (over TLS; quiver query --no-lz4-checksums)");
  cmd->add_flag("--json", o->json, "JSON lines, one per case");
  cmd->add_flag("--check", b.check,
                "check the results (rows, JSON, stream peak bound, Node rows); non-zero exit on failure");
  cmd->add_option("--curl", b.curl, "curl binary (default curl)");
  cmd->add_flag("--no-curl", b.no_curl, "skip curl");
  cmd->add_option("--node", b.node, "node binary (default node)");
  cmd->add_option("--node-script", b.node_script, "the Node fetchAll script (default bench/databricks_fetchall.mjs)");
  cmd->add_option("--node-max-gib", b.node_max_gib,
                  "Node fetchAll reads at most this many decoded GiB (LIMIT; JS row objects are large) (default 0.5)");
  cmd->add_flag("--no-node", b.no_node, "skip the Node client");
  cmd->add_option("--keep-dir", b.keep_dir, "work in this directory and keep it");
  cmd->add_option("--quiver-exe", b.quiver_path,
                  "quiver executable to start as the server and the measured clients (default: this one; another "
                  "build's to compare builds with this harness)");
  cmd->callback([&ctx, o, action] {
    *action = [&ctx, o]() -> Status {
      bench::FetchBenchOptions bo = o->bench;
      if (bo.quiver_path.empty()) bo.quiver_path = SelfExecutable();
#ifdef QUIVER_BENCH_DIR
      if (bo.node_script.empty()) bo.node_script = std::string(QUIVER_BENCH_DIR) + "/databricks_fetchall.mjs";
#endif
      QUIVER_ASSIGN_OR_RETURN(const bench::FetchBenchResult r, bench::RunFetchBench(bo, ctx.root, stderr));
      std::fputs(bench::FetchBenchReport(r, bo, o->json).c_str(), stdout);
      std::fflush(stdout);
      if (!bo.check) return Status::OK();
      return CheckResult("bench fetch", r.failures, std::to_string(r.rows.size()) + " rows of results");
    };
  });

  // The measured process (hidden): one fetch, a JSON line on stdout.
  auto* cl = bench->add_subcommand("fetch-client", "one measured fetch (used by bench fetch)");
  cl->group("");
  auto c = std::make_shared<bench::FetchClientOptions>();
  cl->add_option("--server", c->server_url)->required();
  cl->add_option("--ca-cert", c->ca_cert_path);
  cl->add_option("--sql", c->sql)->required();
  cl->add_option("--policy", c->policy);
  cl->add_option("--mode", c->mode)->check(CLI::IsMember({"fetchall", "repeat", "stream"}));
  cl->add_option("--window", c->window_bytes)->transform(ByteSize());
  cl->add_option("--parallel", c->parallel);
  cl->add_flag("--no-lz4-checksums", [c](std::int64_t) { c->verify_lz4_checksums = false; });
  cl->add_option("--repeat", c->repeat);
  cl->callback([&ctx, c, action] {
    *action = [&ctx, c]() -> Status {
      bench::FetchClientOptions co = *c;
      if (const char* env = std::getenv("QUIVER_TOKEN")) co.token = env;
      QUIVER_ASSIGN_OR_RETURN(const bench::FetchClientMeasurement m, bench::RunFetchClient(co, ctx.root));
      std::printf("%s\n", bench::FetchClientJson(m).c_str());
      std::fflush(stdout);
      return Status::OK();
    };
  });
}

}  // namespace quiver::cli
